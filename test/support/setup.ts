/**
 * Runs in every test file: the steps helpers registered run after each test (cleanup.ts), the
 * temp folders the file's tests made are removed when it ends, and no stand-in JVM an in-process
 * fake agent started is left running by then.
 */
import { afterAll, afterEach, expect } from 'vitest';
import { removeTempDirs } from './cli.js';
import { runAfterTestSteps } from './cleanup.js';
import { standInsOf } from './stand-ins.js';

afterEach(runAfterTestSteps);
afterAll(() => {
  removeTempDirs();
  expect(standInsOf(process.pid)).toEqual([]);
});
