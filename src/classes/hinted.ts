/**
 * Detection from hints (watch mode): only folders that may have changed are scanned, by the usual
 * rule (snapshot.ts), costing their rows, not the tree's; row numbers are kept. Folders of rows
 * not live by the record are scanned too, so a class not yet proven is asked again every cycle.
 */
import path from 'node:path';
import { IndexBuilder, SHA_BYTES, STAMP_FIELDS, type ClassIndex } from './columns.js';
import { isLive } from './evidence.js';
import { noFolders } from './folders.js';
import { detectChanges, type Detection, type ScanOptions } from './snapshot.js';

/** Per index, its rows by folder (absolute, without a trailing separator). */
const folderRows = new WeakMap<ClassIndex, Map<string, number[]>>();

/**
 * {@link detectChanges} of `dirs` against `base`, looking only in the `hinted` folders (absolute, each
 * without the folders below it) and in the folders of rows of `dirs` that are not live: rows
 * elsewhere are kept as they are and counted in `total`. Never throws for the file system.
 */
export async function detectInFolders(
  base: ClassIndex,
  dirs: readonly string[],
  hinted: ReadonlySet<string>,
  options: Omit<ScanOptions, 'folders'>,
): Promise<Detection> {
  const folders = new Set([...hinted, ...notLiveFolders(base, dirs)]);
  const byFolder = rowsByFolder(base);
  const rows = [...folders].flatMap((folder) => byFolder.get(folder) ?? []);
  const builder = new IndexBuilder(base.sessionId, base.dirs, rows.length + 8);
  for (const row of rows) builder.copy(base, row, base.dirOf[row]!);
  const detection = await detectChanges(builder.finish(noFolders(), base.folderHistory), dirs, { ...options, folders });
  const index = mergeRows(base, rows, detection.index, byFolder);
  const untouched = liveRows(base, dirs) - rows.filter((row) => base.gone[row] === 0 && inDirs(base, row, dirs)).length;
  return { ...detection, index, changes: { ...detection.changes, total: detection.changes.total + untouched } };
}

/** The folders of the rows of `index` in one of `dirs` whose evidence is not live: what is still to be asked. */
function notLiveFolders(index: ClassIndex, dirs: readonly string[]): Set<string> {
  const numbers = new Set(dirs.map((dir) => index.dirs.indexOf(path.resolve(dir))).filter((n) => n !== -1));
  const folders = new Set<string>();
  for (let row = 0; row < index.evidence.length; row += 1) {
    if (index.gone[row] === 0 && !isLive(index.evidence[row]!) && numbers.has(index.dirOf[row]!))
      folders.add(path.dirname(index.paths[row]!));
  }
  return folders;
}

/** The rows of `index` by folder, made once per index. */
function rowsByFolder(index: ClassIndex): Map<string, number[]> {
  const known = folderRows.get(index);
  if (known !== undefined) return known;
  const map = new Map<string, number[]>();
  index.paths.forEach((file, row) => addRow(map, file, row));
  folderRows.set(index, map);
  return map;
}

function addRow(map: Map<string, number[]>, file: string, row: number): void {
  const folder = file.slice(0, file.lastIndexOf(path.sep));
  const rows = map.get(folder);
  if (rows === undefined) map.set(folder, [row]);
  else rows.push(row);
}

/**
 * `base` with the rows of `result` put in: the row of a path `rows` had is overwritten, a new
 * path appended. `byFolder` is `base`'s lookup; the merged index gets it with the new rows.
 */
function mergeRows(base: ClassIndex, rows: number[], result: ClassIndex, byFolder: Map<string, number[]>): ClassIndex {
  const rowOf = new Map(rows.map((row) => [base.paths[row]!, row]));
  const added = result.paths.filter((file) => !rowOf.has(file)).length;
  const count = base.paths.length + added;
  const merged: ClassIndex = {
    sessionId: base.sessionId,
    dirs: result.dirs,
    paths: base.paths.slice(),
    dirOf: grown(base.dirOf, count),
    stamps: grown(base.stamps, count * STAMP_FIELDS),
    shas: Buffer.alloc(count * SHA_BYTES),
    evidence: grown(base.evidence, count),
    gone: grown(base.gone, count),
    history: new Map(base.history),
    // No folder table: its row ranges would not match the merged rows, so the next full scan reads every folder.
    folders: noFolders(),
    folderHistory: result.folderHistory,
  };
  base.shas.copy(merged.shas);
  const lookup = added === 0 ? byFolder : new Map(byFolder);
  result.paths.forEach((file, from) => {
    let to = rowOf.get(file);
    if (to === undefined) {
      to = merged.paths.push(file) - 1;
      const folder = file.slice(0, file.lastIndexOf(path.sep));
      lookup.set(folder, [...(lookup.get(folder) ?? []), to]);
    }
    merged.dirOf[to] = result.dirOf[from]!;
    merged.stamps.set(result.stamps.subarray(from * STAMP_FIELDS, (from + 1) * STAMP_FIELDS), to * STAMP_FIELDS);
    result.shas.copy(merged.shas, to * SHA_BYTES, from * SHA_BYTES, (from + 1) * SHA_BYTES);
    merged.evidence[to] = result.evidence[from]!;
    merged.gone[to] = result.gone[from]!;
    const history = result.history.get(file);
    if (history === undefined) merged.history.delete(file);
    else merged.history.set(file, history);
  });
  folderRows.set(merged, lookup);
  return merged;
}

/** A copy of `column` with room for `length` values. */
function grown<T extends Uint32Array | Float64Array | Uint8Array>(column: T, length: number): T {
  const copy = new (column.constructor as new (n: number) => T)(length);
  copy.set(column);
  return copy;
}

/** How many rows of `index` are not tombstones and lie in one of `dirs`. */
function liveRows(index: ClassIndex, dirs: readonly string[]): number {
  const numbers = new Set(dirs.map((dir) => index.dirs.indexOf(path.resolve(dir))).filter((n) => n !== -1));
  let count = 0;
  for (let row = 0; row < index.gone.length; row += 1) if (index.gone[row] === 0 && numbers.has(index.dirOf[row]!)) count += 1;
  return count;
}

function inDirs(index: ClassIndex, row: number, dirs: readonly string[]): boolean {
  return dirs.some((dir) => path.resolve(dir) === index.dirs[index.dirOf[row]!]);
}
