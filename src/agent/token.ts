/**
 * Token rules (protocol.md "Commands"), apart from `protocol.ts` so that the command line can
 * check `--owner` without loading the protocol's schemas.
 */

/** Tokens (request, owner, doctor): protocol.md "Commands". */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** True when `token` is a valid request, owner or doctor token. */
export function isToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}
