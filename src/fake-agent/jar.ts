/**
 * The entries of a jar on the stand-in JVM's class path, as the JDK's class loader reads them
 * when it opens the jar (a zip file: its central directory, APPNOTE.TXT 4.3.12 and 4.3.16, and
 * each entry's local header and data, stored or deflated), and its manifest's main attributes.
 * Only what the fake's JVM needs.
 */
import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';

const END_RECORD = 0x06054b50;
const END_RECORD_BYTES = 22;
const CENTRAL_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;

/**
 * The bytes of every file entry of the jar (a zip file) `zip`, by entry name
 * (`com/acme/Shape.class`, `META-INF/MANIFEST.MF`, `BOOT-INF/lib/dep.jar`); an empty map when it
 * is not a zip file, and what was read before a part cut short or unreadable. Never throws.
 */
export function jarEntries(zip: Buffer): Map<string, Buffer> {
  const found = new Map<string, Buffer>();
  try {
    let end = -1;
    for (let at = zip.length - END_RECORD_BYTES; at >= Math.max(0, zip.length - 0xffff - END_RECORD_BYTES); at -= 1) {
      if (zip.readUInt32LE(at) === END_RECORD) {
        end = at;
        break;
      }
    }
    if (end < 0) return found;
    const directoryEnd = zip.readUInt32LE(end + 16) + zip.readUInt32LE(end + 12);
    for (let at = zip.readUInt32LE(end + 16); at + 46 <= directoryEnd; ) {
      if (zip.readUInt32LE(at) !== CENTRAL_ENTRY) return found;
      const nameBytes = zip.readUInt16LE(at + 28);
      const name = zip.toString('utf8', at + 46, at + 46 + nameBytes);
      const bytes = name.endsWith('/') ? undefined : entryBytes(zip, zip.readUInt16LE(at + 10), zip.readUInt32LE(at + 20), zip.readUInt32LE(at + 42));
      if (bytes !== undefined) found.set(name, bytes);
      at += 46 + nameBytes + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    }
  } catch {
    // cut short: what was read so far is what the JVM finds
  }
  return found;
}

/** The entries of jar file `file` as {@link jarEntries} reads them; none when it cannot be read. Never throws. */
export function jarFileEntries(file: string): Map<string, Buffer> {
  try {
    return jarEntries(readFileSync(file));
  } catch {
    return new Map();
  }
}

/**
 * The `Class-Path` of a jar's manifest (`META-INF/MANIFEST.MF`, the JAR File Specification: a
 * line that starts with a space continues the one before), as the relative or `file:` URLs it
 * lists, in order; none without one.
 */
export function manifestClassPath(entries: ReadonlyMap<string, Buffer>): string[] {
  const manifest = entries.get('META-INF/MANIFEST.MF')?.toString('utf8');
  return manifestValue(manifest, 'Class-Path')?.split(' ').filter((url) => url !== '') ?? [];
}

/** The value of main attribute `name` of a manifest's text (names match in any case), or undefined. */
export function manifestValue(manifest: string | undefined, name: string): string | undefined {
  if (manifest === undefined) return undefined;
  const lines = manifest.split(/\r\n|\r|\n/);
  const main = lines.slice(0, lines.includes('') ? lines.indexOf('') : lines.length).join('\n').replace(/\n /g, '');
  for (const line of main.split('\n')) {
    const colon = line.indexOf(': ');
    if (colon > 0 && line.slice(0, colon).toLowerCase() === name.toLowerCase()) return line.slice(colon + 2).trim();
  }
  return undefined;
}

function entryBytes(zip: Buffer, method: number, compressed: number, local: number): Buffer | undefined {
  if (zip.readUInt32LE(local) !== LOCAL_HEADER) return undefined;
  const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
  const data = zip.subarray(start, start + compressed);
  if (method === STORED) return Buffer.from(data);
  if (method === DEFLATED) return inflateRawSync(data);
  return undefined;
}
