/**
 * Just enough of the class file format (JVMS §4.1, §4.4) to read a class's superclass and
 * interfaces: a JVM cannot redefine a class with another superclass, so the agent reports such
 * a change as needing a restart (protocol.md, "VERIFY": a superclass change is `unverified`).
 */

/** Superclass and interfaces of one class, binary names with dots. */
export interface Hierarchy {
  /** `''` for java.lang.Object and module-info. */
  superclass: string;
  interfaces: string[];
}

/** Constant pool tags and the bytes each entry takes after its tag (JVMS §4.4). */
const ENTRY_BYTES: Record<number, number> = { 3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2, 20: 2 };
const UTF8 = 1;
const CLASS = 7;

/** The hierarchy declared by class file `bytes`, or null when they are not a class file. */
export function readHierarchy(bytes: Buffer): Hierarchy | null {
  try {
    if (bytes.length < 10 || bytes.readUInt32BE(0) !== 0xcafebabe) return null;
    const count = bytes.readUInt16BE(8);
    // Where each Utf8 entry starts, and which Utf8 entry each Class entry names; names are
    // decoded only for the few classes asked for.
    const utf8At = new Int32Array(count).fill(-1);
    const classNameIndex = new Int32Array(count).fill(-1);
    let at = 10;
    for (let index = 1; index < count; index++) {
      const tag = bytes[at++];
      if (tag === UTF8) {
        utf8At[index] = at;
        at += 2 + bytes.readUInt16BE(at);
        continue;
      }
      const size = ENTRY_BYTES[tag];
      if (size === undefined) return null;
      if (tag === CLASS) classNameIndex[index] = bytes.readUInt16BE(at);
      at += size;
      if (tag === 5 || tag === 6) index++; // long and double take two slots
    }
    const name = (classIndex: number): string => {
      const start = utf8At[classNameIndex[classIndex] ?? -1] ?? -1;
      if (start < 0) throw new Error('bad class reference');
      return bytes.toString('utf8', start + 2, start + 2 + bytes.readUInt16BE(start)).replace(/\//g, '.');
    };
    const superIndex = bytes.readUInt16BE(at + 4);
    const interfaceCount = bytes.readUInt16BE(at + 6);
    const interfaces: string[] = [];
    for (let i = 0; i < interfaceCount; i++) interfaces.push(name(bytes.readUInt16BE(at + 8 + 2 * i)));
    return { superclass: superIndex === 0 ? '' : name(superIndex), interfaces };
  } catch {
    return null;
  }
}

/**
 * The superclass change from `before` to `after` (binary names), or undefined when it is the
 * same. The agent cannot apply a superclass change without a restart (agent
 * reload/StructuralReloader.java); interfaces and members it reloads.
 */
export function superclassChange(before: Hierarchy, after: Hierarchy): { from: string; to: string } | undefined {
  return before.superclass === after.superclass ? undefined : { from: before.superclass || 'java.lang.Object', to: after.superclass || 'java.lang.Object' };
}
