/** Default bounds of a build and the subcommands, in ms: the command line's, the config's and the library's. */
export const DEFAULTS = { timeoutMs: 5000, verifyTimeoutMs: 30000, waitMs: 30000 } as const;
