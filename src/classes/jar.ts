/**
 * The entry names of a jar (a zip file), read from its central directory (APPNOTE.TXT 4.3.12,
 * 4.3.16, and the zip64 records of 4.3.14-15), and what its manifest's `Class-Path` lists:
 * enough to tell whether a jar earlier on the JVM's class path holds a class. Only read.
 */
import fs from 'node:fs';
import { inflateRawSync } from 'node:zlib';

/** What a jar holds, as far as the class path is concerned. */
export interface JarListing {
  /** Its entry names (`com/acme/Shape.class`). */
  names: ReadonlySet<string>;
  /**
   * Its manifest's `Class-Path` as written: relative or `file:` URLs, in order (none without one),
   * entries the JVM's class loader opens right after the jar; undefined when the manifest cannot be read.
   */
  classPath: readonly string[] | undefined;
}

const END_RECORD = 0x06054b50;
const END_RECORD_BYTES = 22;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_END = 0x06064b50;
const CENTRAL_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
/** The end record is within the last 64 KiB (its comment) of the file. */
const TAIL_BYTES = 0xffff + END_RECORD_BYTES;
const MANIFEST = 'META-INF/MANIFEST.MF';
/** A manifest larger than this is not read: its `Class-Path` is then unknown. */
const MANIFEST_BYTES = 1 << 20;

/** The listing of the jar `file`; undefined when it cannot be read or is not a zip file. Never throws. */
export function readJar(file: string): JarListing | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    return listing(fd, fs.fstatSync(fd).size);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function listing(fd: number, size: number): JarListing | undefined {
  const directory = centralDirectory(fd, size);
  if (directory === undefined) return undefined;
  const names = new Set<string>();
  let manifest: { method: number; compressed: number; local: number } | undefined;
  for (let at = 0; at + 46 <= directory.length;) {
    if (directory.readUInt32LE(at) !== CENTRAL_ENTRY) return undefined;
    const nameBytes = directory.readUInt16LE(at + 28);
    const skip = nameBytes + directory.readUInt16LE(at + 30) + directory.readUInt16LE(at + 32);
    const name = directory.toString('utf8', at + 46, at + 46 + nameBytes);
    names.add(name);
    if (name === MANIFEST) {
      manifest = {
        method: directory.readUInt16LE(at + 10),
        compressed: directory.readUInt32LE(at + 20),
        local: directory.readUInt32LE(at + 42),
      };
    }
    at += 46 + skip;
  }
  return { names, classPath: manifest === undefined ? [] : manifestClassPath(fd, manifest) };
}

/** The central directory's bytes, found from the end record (zip64 where it says so). */
function centralDirectory(fd: number, size: number): Buffer | undefined {
  const tailBytes = Math.min(size, TAIL_BYTES);
  const tail = read(fd, size - tailBytes, tailBytes);
  let end = -1;
  for (let at = tail.length - END_RECORD_BYTES; at >= 0; at -= 1) {
    if (tail.readUInt32LE(at) === END_RECORD) {
      end = at;
      break;
    }
  }
  if (end < 0) return undefined;
  let length = tail.readUInt32LE(end + 12);
  let offset = tail.readUInt32LE(end + 16);
  if ((length === 0xffffffff || offset === 0xffffffff) && end >= 20 && tail.readUInt32LE(end - 20) === ZIP64_LOCATOR) {
    const record = read(fd, Number(tail.readBigUInt64LE(end - 20 + 8)), 56);
    if (record.readUInt32LE(0) !== ZIP64_END) return undefined;
    length = Number(record.readBigUInt64LE(40));
    offset = Number(record.readBigUInt64LE(48));
  }
  if (offset + length > size) return undefined;
  return read(fd, offset, length);
}

/** The `Class-Path` URLs of the manifest (stored or deflated); undefined when it cannot be read. */
function manifestClassPath(fd: number, entry: { method: number; compressed: number; local: number }): string[] | undefined {
  if (entry.compressed > MANIFEST_BYTES) return undefined;
  const header = read(fd, entry.local, 30);
  if (header.length < 30 || header.readUInt32LE(0) !== LOCAL_HEADER) return undefined;
  const start = entry.local + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
  const bytes = read(fd, start, entry.compressed);
  try {
    if (entry.method !== 0 && entry.method !== 8) return undefined;
    return classPathOf((entry.method === 0 ? bytes : inflateRawSync(bytes, { maxOutputLength: 4 * MANIFEST_BYTES })).toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The `Class-Path` of a manifest's main section (up to its first empty line; a line starting with
 * a space continues the one before; names in any case: the JAR File Specification), split on
 * white space as the JDK's class loader splits it (URLClassPath.JarLoader.parseClassPath).
 */
function classPathOf(manifest: string): string[] {
  const lines = manifest.split(/\r\n|\r|\n/);
  const end = lines.indexOf('');
  const main = (end < 0 ? lines : lines.slice(0, end)).join('\n').replace(/\n /g, '');
  // A repeated attribute: the last one stands (java.util.jar.Attributes.read).
  const attribute = main
    .split('\n')
    .filter((line) => /^class-path:/i.test(line))
    .at(-1);
  return attribute === undefined
    ? []
    : attribute
        .slice('class-path:'.length)
        .split(/[ \t\n\r\f]+/)
        .filter((url) => url !== '');
}

function read(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const got = fs.readSync(fd, buffer, done, length - done, position + done);
    if (got === 0) break;
    done += got;
  }
  return buffer.subarray(0, done);
}
