/**
 * The class files of a jar on the stand-in JVM's class path, as the JDK's class loader reads them
 * when it opens the jar (a zip file: its central directory, APPNOTE.TXT 4.3.12 and 4.3.16, and
 * each entry's local header and data, stored or deflated). Only what the fake's JVM needs.
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
 * The bytes of every `.class` entry of jar `file`, by entry name (`com/acme/Shape.class`); an
 * empty map when it cannot be read or is not a zip file (the JVM then finds no class in it).
 * Never throws.
 */
export function jarClasses(file: string): Map<string, Buffer> {
  const found = new Map<string, Buffer>();
  try {
    const zip = readFileSync(file);
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
      const bytes = name.endsWith('.class') ? entryBytes(zip, zip.readUInt16LE(at + 10), zip.readUInt32LE(at + 20), zip.readUInt32LE(at + 42)) : undefined;
      if (bytes !== undefined) found.set(name, bytes);
      at += 46 + nameBytes + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    }
  } catch {
    // unreadable or cut short: what was read so far is what the JVM finds
  }
  return found;
}

function entryBytes(zip: Buffer, method: number, compressed: number, local: number): Buffer | undefined {
  if (zip.readUInt32LE(local) !== LOCAL_HEADER) return undefined;
  const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
  const data = zip.subarray(start, start + compressed);
  if (method === STORED) return Buffer.from(data);
  if (method === DEFLATED) return inflateRawSync(data);
  return undefined;
}
