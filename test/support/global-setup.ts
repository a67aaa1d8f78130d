/** Once per `vitest run`, whichever projects run: at the end the CLI's code cache the tests used is removed. */
import fs from 'node:fs';
import { TEST_CODE_CACHE_DIR } from './cli.js';

export function teardown(): void {
  fs.rmSync(TEST_CODE_CACHE_DIR, { recursive: true, force: true });
}
