/**
 * Import direction between the rooms of src/ (`npm run lint`). A room may import only the
 * rooms below it; `forbidden` lists every edge that is not allowed, each with why.
 *
 * From the top: the command line (src/cli*.ts, src/launch.ts, src/commands/cli.ts,
 * src/commands/actions.ts) imports everything; the subcommands' cores (src/commands/) and the
 * build flow (src/run.ts) import the rooms below them; state/ and verify/ and hold/ sit above
 * classes/, which sits above agent/; build/ stands alone; report/ (words and renderers) and
 * everything else import outcome/, the vocabulary at the bottom.
 */
const ROOMS = ['agent', 'hold', 'build', 'classes', 'verify', 'state', 'outcome', 'report', 'commands'];
const CLI = '^src/(cli[^/]*\\.ts|launch\\.ts|commands/(cli|actions)\\.ts)$';

/** A rule: files in `room` may import only `allowed` rooms (and their own, and node: / packages). */
function only(room, allowed, comment) {
  const others = ROOMS.filter((r) => r !== room && !allowed.includes(r));
  return {
    name: `${room}-imports-only-${allowed.join('-') || 'itself'}`,
    comment,
    severity: 'error',
    from: { path: `^src/${room}/` },
    to: { path: [`^src/(${others.join('|')})/`, '^src/[^/]+\\.ts$'] },
  };
}

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'A cycle makes two modules one: neither can be understood, tested or loaded lazily on its own.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'nothing-imports-the-cli',
      comment: 'The command line is the top: only it touches argv, stdio and exit codes, and the core must work without it.',
      severity: 'error',
      from: { pathNot: CLI },
      to: { path: CLI },
    },
    {
      name: 'fake-agent-stands-alone',
      comment: 'The fake agent is a stand-in for the real one: it shares no code with the client it tests.',
      severity: 'error',
      from: { path: '^src/fake-agent/' },
      to: { path: '^src/', pathNot: '^src/fake-agent/' },
    },
    {
      name: 'nothing-imports-the-fake-agent',
      comment: 'The client must not lean on the fake agent: tests and the package export reach it from outside src/.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(fake-agent/|index\\.ts$)' },
      to: { path: '^src/fake-agent/' },
    },
    only('outcome', [], 'outcome/ is the vocabulary every room speaks (reasons, exit statuses, result shapes): it imports no room.'),
    only('report', ['outcome'], 'report/ turns outcomes into words: it knows the vocabulary, never how outcomes came about.'),
    only('agent', ['outcome'], 'agent/ is the lowest room that does work: discovery, the socket, the grammar.'),
    only('build', ['outcome'], 'build/ runs the build tool; it knows nothing of the agent.'),
    only(
      'classes',
      ['agent', 'outcome'],
      'classes/ finds changed class files; it uses the agent grammar only for which names VERIFY accepts.',
    ),
    only('hold', ['agent', 'outcome'], 'hold/ is the BUILD exchange on an agent connection.'),
    only('verify', ['agent', 'outcome'], 'verify/ is the VERIFY exchange on an agent connection.'),
    only('state', ['agent', 'classes', 'outcome'], 'state/ stores owner tokens (agent grammar) and the class index (classes/).'),
    {
      name: 'commands-import-rooms-below',
      comment: 'The subcommands cores use the rooms below them, never the build flow (src/run.ts) or the command line.',
      severity: 'error',
      from: { path: '^src/commands/', pathNot: CLI },
      to: { path: '^src/run\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
