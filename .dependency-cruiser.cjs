/**
 * Import direction between the rooms of src/ (`npm run lint`). A room may import only the
 * rooms below it; `forbidden` lists every edge that is not allowed, each with why.
 *
 * From the top: cli/ (argument parsing, config, process I/O, exit codes, the launcher) imports
 * everything, and only the package entry (src/index.ts, the library's face) and mcp/ import it;
 * mcp/ (`reclazz-build mcp`, a face beside cli/) runs the command line as a child process per
 * call and takes from cli/ only the options' schema, and cli/ reaches it only through its own
 * bundle, by path (no import); the
 * build flow (src/run.ts) and the subcommands' cores (commands/) sit on the session API
 * (session/); session/ drives the rooms that do the work: hold/ above state/ above classes/,
 * verify/ and classes/ above agent/, tool/ on its own; report/ (words and renderers) knows
 * only outcome/, the vocabulary at the bottom, and only the faces (cli/, mcp/, the package
 * entry) import it: the core hands them facts, and they ask report/ for the words. util/ (waiting, small file-system questions) is
 * beneath them all: any room may use it, and it knows none.
 */
const ROOMS = [
  'agent',
  'hold',
  'tool',
  'classes',
  'verify',
  'state',
  'outcome',
  'report',
  'commands',
  'session',
  'watch',
  'cli',
  'mcp',
  'util',
];

/** A rule: files in `room` may import only `allowed` rooms (and their own, util/, and node: / packages). */
function only(room, allowed, comment) {
  const others = ROOMS.filter((r) => r !== room && r !== 'util' && !allowed.includes(r));
  return {
    name: `${room}-imports-only-${allowed.join('-') || 'itself'}`,
    comment,
    severity: 'error',
    from: { path: `^src/${room}/` },
    to: { path: [`^src/(${others.join('|')}|fake-agent)/`, '^src/[^/]+\\.ts$'] },
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
      name: 'only-the-package-entry-imports-the-cli',
      comment:
        'cli/ is the top and the only code that touches `process`; the package entry takes its host defaults (env, cwd, platform) from it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(cli/|mcp/|index\\.ts$)' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'mcp-takes-only-the-options-schema-from-the-cli',
      comment:
        'mcp/ runs the command line as a child process (mcp/child.ts says why): of cli/ it needs only the options, declared once in cli/options.ts.',
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: { path: '^src/cli/', pathNot: '^src/cli/options\\.ts$' },
    },
    {
      name: 'nothing-imports-the-mcp-server',
      comment: 'The MCP server and its SDK are a bundle of their own (dist/mcp.cjs), loaded by path by `reclazz-build mcp` only.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/mcp/' },
      to: { path: '^src/mcp/' },
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
      from: { path: '^src/', pathNot: '^src/fake-agent/' },
      to: { path: '^src/fake-agent/' },
    },
    {
      name: 'util-imports-no-room',
      comment: 'util/ holds helpers every room may use (pause, isDir, isInside): it knows no room, or it would tie them together.',
      severity: 'error',
      from: { path: '^src/util/' },
      to: { path: ['^src/(?!util/)[^/]+/', '^src/[^/]+\\.ts$'] },
    },
    {
      name: 'the-core-makes-no-words',
      comment:
        'Results, events and verdicts leave the core as facts (outcome/); only the faces (cli/, mcp/, src/index.ts) ask report/ for their words, so a sentence has one home and a JSON reader gets the same facts the words were made of.',
      severity: 'error',
      from: { path: '^src/((session|watch|commands|agent|hold|tool|classes|verify|state|outcome|util)/|run\\.ts$)' },
      to: { path: '^src/report/' },
    },
    only('outcome', [], 'outcome/ is the vocabulary every room speaks (reasons, exit statuses, facts, results): it imports no room.'),
    only('report', ['outcome'], 'report/ turns outcomes into words: it knows the vocabulary, never how outcomes came about.'),
    only('agent', ['outcome'], 'agent/ is the lowest room that does work: discovery, the socket, the grammar, the handshake.'),
    only('tool', ['outcome'], 'tool/ runs the build tool; it knows nothing of the agent.'),
    only(
      'classes',
      ['agent', 'outcome'],
      'classes/ finds changed class files; it uses the agent grammar only for which names VERIFY accepts.',
    ),
    only('verify', ['agent', 'outcome'], 'verify/ is the VERIFY exchange on an agent connection.'),
    only('state', ['agent', 'classes', 'outcome'], 'state/ stores owner tokens (agent grammar) and the class index (classes/).'),
    only('hold', ['agent', 'state', 'outcome'], 'hold/ is the BUILD exchange and its state machine, and keeps the owner token in state/.'),
    only(
      'session',
      ['agent', 'hold', 'tool', 'classes', 'verify', 'state', 'outcome'],
      'session/ opens a session and runs cycles on it: it drives the working rooms, and its results are facts.',
    ),
    only(
      'commands',
      ['session', 'agent', 'classes', 'verify', 'outcome'],
      "The subcommands' cores open a session and use the rooms below it, never the build flow or the command line.",
    ),
    only(
      'mcp',
      ['cli', 'outcome', 'report'],
      'mcp/ is a face: it turns tool calls into runs of the command line, and their JSON results into tool results with their words.',
    ),
    only(
      'watch',
      ['session', 'agent', 'classes', 'outcome'],
      'watch/ decides when a cycle runs (source watcher, scheduler); it runs them on the session API and tells its cycles and news as facts.',
    ),
    {
      name: 'the-build-flow-sits-on-the-session',
      comment: 'src/run.ts is open + cycle + close: it imports the session API and the vocabulary, not the rooms that do the work.',
      severity: 'error',
      from: { path: '^src/run\\.ts$' },
      to: { path: '^src/(agent|hold|tool|classes|verify|state|commands|report)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
