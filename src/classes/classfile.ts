/**
 * The binary class name a class file declares (`this_class`), read from its constant pool
 * (JVMS §4.1, §4.4). Used when a class file given to `verify` lies outside every known class
 * output directory, so its name cannot be derived from its path.
 */

/** Constant-pool entry sizes after the tag byte, by tag (JVMS table 4.4-B); Utf8 (1) is variable. */
const ENTRY_BYTES: Record<number, number> = {
  3: 4,
  4: 4,
  5: 8,
  6: 8,
  7: 2,
  8: 2,
  9: 4,
  10: 4,
  11: 4,
  12: 4,
  15: 3,
  16: 2,
  17: 4,
  18: 4,
  19: 2,
  20: 2,
};

/**
 * Returns `com.acme.Outer$Inner` for a class file declaring `com/acme/Outer$Inner`, or
 * undefined when `bytes` is not a well-formed class file.
 */
export function declaredClassName(bytes: Uint8Array): string | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const need = (offset: number, n: number) => offset + n <= bytes.length;
  if (!need(0, 10) || view.getUint32(0) !== 0xcafebabe) return undefined;
  const count = view.getUint16(8);
  const utf8 = new Map<number, string>();
  const classes = new Map<number, number>();
  let offset = 10;
  for (let index = 1; index < count; index += 1) {
    if (!need(offset, 1)) return undefined;
    const tag = bytes[offset]!;
    offset += 1;
    if (tag === 1) {
      if (!need(offset, 2)) return undefined;
      const length = view.getUint16(offset);
      if (!need(offset + 2, length)) return undefined;
      utf8.set(index, new TextDecoder().decode(bytes.subarray(offset + 2, offset + 2 + length)));
      offset += 2 + length;
      continue;
    }
    const size = ENTRY_BYTES[tag];
    if (size === undefined || !need(offset, size)) return undefined;
    if (tag === 7) classes.set(index, view.getUint16(offset));
    offset += size;
    if (tag === 5 || tag === 6) index += 1; // long and double take two slots
  }
  if (!need(offset, 4)) return undefined;
  const nameIndex = classes.get(view.getUint16(offset + 2));
  const internal = nameIndex === undefined ? undefined : utf8.get(nameIndex);
  return internal === undefined || internal === '' ? undefined : internal.split('/').join('.');
}
