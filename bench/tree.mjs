/**
 * Synthetic class output trees shaped like real ones: class file sizes from a log-normal
 * (median about 2 KB, a long tail cut at 50 KB), about 40% nested classes (`Outer$Inner`,
 * `Outer$1`), in deep package folders (5 to 8 levels). Deterministic for a seed, except the
 * bytes, which are random behind a class file header.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Every generated file gets this modification time (whole seconds, so a rewrite can restore it exactly). */
export const TREE_MTIME_S = 1_700_000_000;

const MIN_BYTES = 250;
const MAX_BYTES = 50_000;
const ORGS = ['acme', 'globex', 'initech', 'umbrella', 'hooli'];
const PRODUCTS = ['billing', 'catalog', 'checkout', 'identity', 'inventory', 'ledger', 'search', 'shipping'];
const MODULES = ['api', 'core', 'domain', 'infra', 'web', 'batch', 'events', 'client'];
const LAYERS = ['service', 'repository', 'model', 'dto', 'mapper', 'config', 'support', 'internal', 'impl', 'util'];
const NOUNS = ['Order', 'Customer', 'Invoice', 'Payment', 'Account', 'Product', 'Price', 'Stock', 'Shipment', 'Address', 'Session', 'Token', 'Report', 'Ledger', 'Entry', 'Rule', 'Policy', 'Event', 'Query', 'Cart'];
const ROLES = ['Service', 'Repository', 'Controller', 'Mapper', 'Factory', 'Handler', 'Validator', 'Listener', 'Client', 'Config', 'Dto', 'Entity', 'Builder', 'Resolver', 'Provider', 'Impl'];
const INNERS = ['Builder', 'Node', 'Entry', 'Key', 'State', 'Kind', 'Holder', 'Visitor', '1', '2', '3', 'Companion', 'Row'];

/** A small seeded PRNG (mulberry32): numbers in [0, 1). */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick(rand, list) {
  return list[Math.floor(rand() * list.length)];
}

/** Log-normal size around `median` bytes, clamped to [250, 50000]. */
function size(rand, median) {
  const u1 = Math.max(rand(), 1e-12);
  const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * rand());
  return Math.round(Math.min(MAX_BYTES, Math.max(MIN_BYTES, median * Math.exp(0.95 * normal))));
}

/** Class file bytes of `length`: the 0xCAFEBABE magic, Java 17's version, then random bytes. */
export function classBytes(length) {
  const bytes = randomBytes(length);
  bytes.writeUInt32BE(0xcafebabe, 0);
  bytes.writeUInt32BE(61, 4);
  return bytes;
}

/**
 * The relative paths and sizes of `count` class files, in a shuffled order (so the first N,
 * the ones a benchmark rewrites, are spread over the packages).
 */
export function planTree(count, seed) {
  const rand = random(seed);
  const files = [];
  const packages = new Map();
  while (files.length < count) {
    const depth = 5 + Math.floor(rand() * 4);
    const parts = ['com', pick(rand, ORGS), pick(rand, PRODUCTS), pick(rand, MODULES)];
    while (parts.length < depth) parts.push(pick(rand, LAYERS) + (rand() < 0.3 ? String(Math.floor(rand() * 9)) : ''));
    const pkg = parts.join('/');
    const names = packages.get(pkg) ?? new Set();
    packages.set(pkg, names);
    const classes = 8 + Math.floor(rand() * 40);
    for (let c = 0; c < classes && files.length < count; c += 1) {
      let outer = pick(rand, NOUNS) + pick(rand, ROLES);
      while (names.has(outer)) outer = pick(rand, NOUNS) + pick(rand, NOUNS) + pick(rand, ROLES) + (rand() < 0.5 ? String(names.size) : '');
      names.add(outer);
      files.push({ path: `${pkg}/${outer}.class`, size: size(rand, 2400) });
      // Nested classes: a geometric count with mean 2/3 per outer class, so 40% of files are nested.
      const inners = new Set();
      let name = outer;
      while (rand() < 0.4 && files.length < count) {
        let inner = pick(rand, INNERS);
        while (inners.has(inner)) inner = pick(rand, INNERS) + String(inners.size);
        inners.add(inner);
        if (rand() < 0.15) name = `${name}$${inner}`; // deeper nesting: Outer$Inner$Node
        else name = `${outer}$${inner}`;
        files.push({ path: `${pkg}/${name}.class`, size: size(rand, 1400) });
      }
    }
  }
  for (let i = files.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rand() * (i + 1));
    [files[i], files[j]] = [files[j], files[i]];
  }
  return files;
}

/** Writes the planned files below `dir` and `manifest` (a JSON list of relative paths). */
export function writeTree(dir, files, manifest) {
  const made = new Set();
  for (const file of files) {
    const full = path.join(dir, file.path);
    const parent = path.dirname(full);
    if (!made.has(parent)) {
      fs.mkdirSync(parent, { recursive: true });
      made.add(parent);
    }
    fs.writeFileSync(full, classBytes(file.size));
    fs.utimesSync(full, TREE_MTIME_S, TREE_MTIME_S);
  }
  if (manifest !== undefined) fs.writeFileSync(manifest, JSON.stringify(files.map((f) => f.path)));
}

/** Median, 99th percentile and largest size, and the share of nested classes, of a plan. */
export function describeTree(files) {
  const sizes = files.map((f) => f.size).sort((a, b) => a - b);
  const nested = files.filter((f) => path.basename(f.path).includes('$')).length;
  // A loop, not Math.min(...depths): spreading 200,000 arguments overflows the call stack.
  let minDepth = Infinity;
  let maxDepth = -Infinity;
  for (const f of files) {
    const depth = f.path.split('/').length - 1;
    if (depth < minDepth) minDepth = depth;
    if (depth > maxDepth) maxDepth = depth;
  }
  return {
    files: files.length,
    medianBytes: sizes[sizes.length >> 1],
    p99Bytes: sizes[Math.floor(sizes.length * 0.99)],
    maxBytes: sizes[sizes.length - 1],
    totalMB: Math.round(sizes.reduce((a, b) => a + b, 0) / 1e5) / 10,
    nestedShare: Math.round((nested / files.length) * 100) / 100,
    packageDepth: `${minDepth}-${maxDepth}`,
  };
}
