/** Test data for the state tests, free of test-runner imports (the child process bundles it). */
import { EVIDENCE } from '../../src/classes/evidence.js';
import type { ClassIndex } from '../../src/classes/columns.js';
import { noFolders } from '../../src/classes/folders.js';

/** A class index of `rows` rows under one class folder, about 100 bytes a row once encoded. */
export function indexOf(rows: number, sessionId = 's1'): ClassIndex {
  const dir = '/project/target/classes';
  const paths = Array.from({ length: rows }, (_, i) => `${dir}/com/acme/Class${i}.class`);
  const stamps = new Float64Array(rows * 4).map((_, i) => i);
  const shas = Buffer.alloc(rows * 32);
  for (let i = 0; i < shas.length; i++) shas[i] = i % 251;
  const evidence = new Uint8Array(rows).fill(EVIDENCE.preStart);
  return { sessionId, dirs: [dir], paths, dirOf: new Uint32Array(rows), stamps, shas, evidence, gone: new Uint8Array(rows), history: new Map(), folders: noFolders(), folderHistory: new Map() };
}
