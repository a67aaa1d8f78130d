/** Runs in every test file: the temp folders its tests made are removed when it ends. */
import { afterAll } from 'vitest';
import { removeTempDirs } from './cli.js';

afterAll(() => removeTempDirs());
