/**
 * Watch mode's full stat pass between cycles (watch/hints.ts): which folders of the class output
 * directories hold a class file whose stamp is not the one the class index recorded, a class
 * file the index has no row for, or none where it has a live row. One stat per class file, no
 * hashing: the next cycle's detection (classes/snapshot.ts) looks at those folders and decides.
 */
import path from 'node:path';
import { sameStampAsRow } from '../classes/columns.js';
import { classFolders, Pacer, statClassFile, UNREADABLE } from '../classes/scan.js';
import { readClassIndex } from '../state/store.js';

/**
 * The folders (absolute) below `dirs` whose class files differ from the class index of
 * `projectDir` by their stamps; every folder when there is no index. Never throws for the class
 * folders; a folder that cannot be listed counts as differing.
 * @throws StateError when the state folder or the index is a symbolic link.
 */
export async function staleFolders(projectDir: string, dirs: readonly string[], warn: (message: string) => void): Promise<Set<string>> {
  const index = readClassIndex(projectDir, warn);
  const rowOf = new Map(index.paths.map((file, row) => [file, row]));
  const seen = new Uint8Array(index.paths.length);
  const stale = new Set<string>();
  const pacer = new Pacer();
  const unreadable: string[] = [];
  for (const dir of dirs) {
    for (const { folder, names } of classFolders(path.resolve(dir), unreadable)) {
      await pacer.turn();
      for (const name of names) {
        const file = folder + path.sep + name;
        const row = rowOf.get(file);
        if (row !== undefined) seen[row] = 1;
        const stat = statClassFile(file);
        if (stat === undefined) continue;
        if (row === undefined || index.gone[row] === 1 || stat === UNREADABLE || !sameStampAsRow(index, row, stat)) stale.add(folder);
      }
    }
  }
  for (const folder of unreadable) stale.add(folder);
  const scanned = dirs.map((dir) => path.resolve(dir));
  index.paths.forEach((file, row) => {
    const inScanned = scanned.some((dir) => file.startsWith(dir + path.sep));
    if (seen[row] === 0 && index.gone[row] === 0 && inScanned) stale.add(path.dirname(file));
  });
  return stale;
}
