/**
 * Terminal-safe text: which characters are shown as escapes, in which form, and that text with
 * nothing to escape takes the fast path.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hasControl, terminalSafeJson, visible, visibleFacts } from '../../src/report/palette.js';

/** The escaped set, written as the ranges the terminal-output rule names. */
const ESCAPED_RANGES: Array<[number, number]> = [
  [0x00, 0x08],
  [0x0a, 0x1f],
  [0x7f, 0x7f],
  [0x80, 0x9f],
  [0x202a, 0x202e],
  [0x2066, 0x2069],
];

function isEscaped(code: number): boolean {
  return ESCAPED_RANGES.some(([low, high]) => code >= low && code <= high);
}

describe('visible', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const BOUNDARIES: Array<[number, string]> = [
    // [code point, shown as]
    [0x00, '\\x00'],
    [0x08, '\\x08'],
    [0x09, '\t'],
    [0x0a, '\\x0a'],
    [0x0d, '\\x0d'],
    [0x1b, '\\x1b'],
    [0x1f, '\\x1f'],
    [0x20, ' '],
    [0x5c, '\\'],
    [0x7e, '~'],
    [0x7f, '\\x7f'],
    [0x80, '\\u0080'],
    [0x9b, '\\u009b'],
    [0x9f, '\\u009f'],
    [0xa0, '\u00a0'],
    [0x2028, '\u2028'],
    [0x2029, '\u2029'],
    [0x202a, '\\u202a'],
    [0x202e, '\\u202e'],
    [0x202f, '\u202f'],
    [0x2065, '\u2065'],
    [0x2066, '\\u2066'],
    [0x2069, '\\u2069'],
    [0x206a, '\u206a'],
    [0xfffd, '\ufffd'],
    [0x1f600, '\u{1f600}'],
    [0x10ffff, '\u{10ffff}'],
  ];

  it.each(BOUNDARIES.map(([code, shown]) => [code.toString(16).toUpperCase().padStart(4, '0'), shown, code] as const))(
    'shows U+%s as %j',
    (_hex, shown, code) => {
      expect(visible(String.fromCodePoint(code))).toBe(shown);
      expect(hasControl(String.fromCodePoint(code))).toBe(shown !== String.fromCodePoint(code));
    },
  );

  it('escapes exactly the named set, for every code unit of the BMP', () => {
    for (let code = 0; code <= 0xffff; code += 1) {
      const ch = String.fromCharCode(code);
      const lone = code >= 0xd800 && code <= 0xdfff;
      const expected = isEscaped(code) || lone ? `\\${code < 0x80 ? 'x' : 'u'}${code.toString(16).padStart(code < 0x80 ? 2 : 4, '0')}` : ch;
      if (visible(ch) !== expected) expect.fail(`U+${code.toString(16)}: ${JSON.stringify(visible(ch))}, want ${JSON.stringify(expected)}`);
      if (hasControl(ch) !== (expected !== ch)) expect.fail(`hasControl(U+${code.toString(16)})`);
    }
  });

  it('keeps surrogate pairs and escapes lone halves, wherever they stand', () => {
    expect(visible('a\u{1f600}b')).toBe('a\u{1f600}b');
    expect(visible('\ud83d')).toBe('\\ud83d');
    expect(visible('\ude00')).toBe('\\ude00');
    expect(visible('x\ud83dy')).toBe('x\\ud83dy');
    // A low half before its high half is two lone halves, not a pair.
    expect(visible('\ude00\ud83d')).toBe('\\ude00\\ud83d');
    // A pair next to a lone high half: the pair survives.
    expect(visible('\ud83d\ud83d\ude00')).toBe('\\ud83d\u{1f600}');
    expect(hasControl('ok \u{1f600}')).toBe(false);
    expect(hasControl('\u{1f600}\ud83d')).toBe(true);
  });

  it('neutralises what a hostile peer sends: title, clear screen, colours, a forged verdict, reordering', () => {
    expect(visible('\x1b]0;pwned\x07')).toBe('\\x1b]0;pwned\\x07');
    expect(visible('\x1b[2J\x1b[31mred\x1b[0m')).toBe('\\x1b[2J\\x1b[31mred\\x1b[0m');
    expect(visible('\u009b2J')).toBe('\\u009b2J');
    expect(visible('boom\r\nreclazz-build: ✔ proven live')).toBe('boom\\x0d\\x0areclazz-build: ✔ proven live');
    expect(visible('Foo\u202eoof.class')).toBe('Foo\\u202eoof.class');
    expect(visible('a\u2066b\u2069c')).toBe('a\\u2066b\\u2069c');
  });

  it('leaves backslashes, tabs and ordinary Unicode alone', () => {
    expect(visible('C:\\Users\\dev\\app\\target\\classes')).toBe('C:\\Users\\dev\\app\\target\\classes');
    expect(visible('\tat com.acme.Foo.bar(Foo.java:12)')).toBe('\tat com.acme.Foo.bar(Foo.java:12)');
    expect(visible('Grüße — 日本語 ✔')).toBe('Grüße — 日本語 ✔');
    expect(visible('')).toBe('');
  });

  it('escapes every occurrence, not only the first', () => {
    expect(visible('\x1b\x1b\n\n\u009b\u009b')).toBe('\\x1b\\x1b\\x0a\\x0a\\u009b\\u009b');
  });

  it('never lets a raw escaped character through, for random text', () => {
    let seed = 12345;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const pool = [0x00, 0x09, 0x0a, 0x1b, 0x5c, 0x41, 0x7f, 0x9b, 0xa0, 0x202e, 0x2067, 0xd83d, 0xde00, 0x4e2d];
    for (let round = 0; round < 2000; round += 1) {
      const length = next() % 12;
      let text = '';
      for (let i = 0; i < length; i += 1) text += String.fromCharCode(pool[next() % pool.length]!);
      const shown = visible(text);
      expect(hasControl(shown)).toBe(false);
      expect(shown === text).toBe(!hasControl(text));
    }
  });

  it('does not rebuild text that has nothing to escape (the fast path for thousands of class names)', () => {
    const replace = vi.spyOn(String.prototype, 'replace');
    for (let i = 0; i < 1000; i += 1) visible(`com.acme.generated.Model${i}$Builder`);
    expect(replace).not.toHaveBeenCalled();
    visible('com.acme.\x1bBad');
    expect(replace).toHaveBeenCalled();
  });
});

describe('visibleFacts', () => {
  it('escapes every string at any depth, keeps other values, and returns what needs nothing as it is', () => {
    const facts = { type: 'agent', agent: { version: 'v\x1b[2J', port: 4242, flags: [true, null], dirs: ['/ok', '/bad\n'] } };
    expect(visibleFacts(facts)).toEqual({
      type: 'agent',
      agent: { version: 'v\\x1b[2J', port: 4242, flags: [true, null], dirs: ['/ok', '/bad\\x0a'] },
    });
    // The input is not changed, and what had nothing to escape is shared, not copied.
    expect(facts.agent.version).toBe('v\x1b[2J');
    const clean = { a: 'x', b: [{ c: 'y' }] };
    expect(visibleFacts(clean)).toBe(clean);
    expect(visibleFacts({ ...clean, d: '\u202e' }).b).toBe(clean.b);
  });

  it('is idempotent: escaped text has nothing left to escape', () => {
    const once = visibleFacts(['\x1b]0;t\x07', '\ud800', '\u009b']);
    expect(visibleFacts(once)).toBe(once);
  });
});

describe('terminalSafeJson', () => {
  it('writes DEL, C1 and bidi controls as \\u escapes; the JSON value stays the same', () => {
    const value = { message: 'a\u007fb\u009bc\u202ed\u2066e\x1b\ud800', n: 1 };
    const json = terminalSafeJson(JSON.stringify(value));
    expect(hasControl(json)).toBe(false);
    expect(json).toContain('\\u007f');
    expect(json).toContain('\\u009b');
    expect(json).toContain('\\u202e');
    expect(JSON.parse(json)).toEqual(value);
  });

  it('returns JSON with nothing to escape unchanged', () => {
    const json = JSON.stringify({ path: 'C:\\x\\y', text: 'Grüße ✔' });
    expect(terminalSafeJson(json)).toBe(json);
  });
});
