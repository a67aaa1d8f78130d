// House rules for the TypeScript sources and tests: typescript-eslint's recommended rules, and
// no unused variables (unused exports and files are knip's job: see knip.json).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'fixtures/', 'bench/tree.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      // `_name` marks a value left out on purpose: a field dropped from a copy, a callback's unused parameter.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true, caughtErrors: 'none' },
      ],
    },
  },
  {
    // Small modules and steps: a file over 350 lines of code or a function over 80 is doing more
    // than one job. Comments and blank lines do not count: a file is never split to fit its docs.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 350, skipComments: true, skipBlankLines: true }],
      'max-lines-per-function': ['error', { max: 80, skipComments: true, skipBlankLines: true }],
    },
  },
  {
    // Only the faces touch the process's global state: its exit, environment, arguments, working
    // folder, standard streams and listeners; the command line (cli/) and the MCP server (mcp/, whose
    // stdin and stdout are the protocol). The rest of the code gets them from the Host that cli/
    // fills (cli/host.ts), so a library user and the tests can give their own.
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**', 'src/mcp/**', 'src/fake-agent/cli.ts', 'src/fake-agent/cli-run.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...[
          'exit',
          'exitCode',
          'env',
          'argv',
          'cwd',
          'chdir',
          'stdout',
          'stderr',
          'stdin',
          'on',
          'once',
          'off',
          'addListener',
          'prependListener',
        ].map((property) => ({
          object: 'process',
          property,
          message: 'Only src/cli/ touches the process: take it from the Host (cli/host.ts).',
        })),
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: ['process', 'node:process'].map((name) => ({
            name,
            message: 'Only src/cli/ touches the process: take it from the Host (cli/host.ts).',
          })),
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "VariableDeclarator[init.name='process'] > ObjectPattern",
          message: 'Only src/cli/ touches the process: take it from the Host (cli/host.ts).',
        },
      ],
    },
  },
  {
    // CommonJS files: the bin shim and anything else that Node loads with require().
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Tests match what a terminal gets: escape sequences (\x1b) and padded columns.
    files: ['test/**/*.ts'],
    rules: { 'no-control-regex': 'off', 'no-regex-spaces': 'off' },
  },
);
