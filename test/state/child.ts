/**
 * A child process for the state tests (see runChild in helpers.ts): writes a class index with
 * the real store code, under limits set by its shell, and prints `{"error": ...}` when the
 * write throws a StateError.
 */
import fs from 'node:fs';
import { StateError, writeClassIndex } from '../../src/state/store.js';
import { indexOf } from './fixtures.js';

const [mode, projectDir, rows] = process.argv.slice(2);
if (mode === 'kill-before-rename') {
  // The last step before the rename: the temp file holds every byte, the real file is untouched.
  fs.fsyncSync = () => process.kill(process.pid, 'SIGKILL');
}
try {
  writeClassIndex(projectDir!, indexOf(Number(rows)));
  console.log('{}');
} catch (error) {
  if (!(error instanceof StateError)) throw error;
  console.log(JSON.stringify({ error: error.message }));
}
