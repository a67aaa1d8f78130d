/** agent/protocol.ts: the command lines the client writes and the receipts it accepts (protocol.md "Commands"). */
import { describe, expect, it } from 'vitest';
import {
  buildLine,
  doctorLine,
  isVerifiableClassName,
  parseBuildReceipt,
  parseReloadState,
  parseTokenJson,
  reloadLine,
  verifyLine,
} from '../../src/agent/protocol.js';

const SHA = 'a'.repeat(64);

describe('command lines', () => {
  it('are written exactly, with single spaces', () => {
    expect(buildLine('started', 'r1', 'o1')).toBe('BUILD started request=r1 owner=o1');
    expect(doctorLine('d1')).toBe('DOCTOR d1');
    expect(reloadLine('pause', 'r2')).toBe('RELOAD pause request=r2');
    expect(verifyLine('v1', 'com.acme.Outer$Inner', SHA)).toBe(`VERIFY v1 com.acme.Outer$Inner ${SHA}`);
  });

  it('refuse what the agent would ignore: bad tokens, names and hashes', () => {
    expect(() => buildLine('ok', 'bad token', 'o1')).toThrow(/request token/);
    expect(() => verifyLine('v1', 'com.acme.package-info', SHA)).toThrow(/verifiable/);
    expect(() => verifyLine('v1', 'com.acme.A', SHA.toUpperCase())).toThrow(/SHA-256/);
  });

  it.each([
    ['com.acme.Greeter', true],
    ['com.acme.Outer$Inner', true],
    ['module-info', false],
    ['com.acme.package-info', false],
    ['com..acme', false],
    ['x'.repeat(257), false],
    ['com.acme.Größe', true],
    ['π.Kreis$1', true],
    ['com.acme.9Lives', false],
    ['com.acme.a-b', false],
    ['com.acme.Zero\u200bWidth', false],
    ['com.acme.٣Arabic', false],
    ['com.acme.Arabic٣', true],
    // Currency symbols and connector punctuation, anywhere in an identifier, as the JVM takes them.
    ['com.acme.Price€', true],
    ['com.acme.€uro', true],
    ['com.acme.a‿b', true],
    ['com.acme.‿tie', true],
    ['com.acme.£$¥', true],
    ['com.acme.a\u00adb', false],
  ])('%j verifiable: %s', (name, ok) => {
    expect(isVerifiableClassName(name)).toBe(ok);
  });
});

describe('receipts', () => {
  it('BUILD receipts match the request token exactly, owner suffix optional', () => {
    expect(parseBuildReceipt('BUILD_ACK r1 started owner=o1', 'r1')).toEqual({
      kind: 'BUILD_ACK',
      request: 'r1',
      state: 'started',
      owner: 'o1',
    });
    expect(parseBuildReceipt('BUILD_REJECTED r1 ok', 'r1')).toEqual({
      kind: 'BUILD_REJECTED',
      request: 'r1',
      state: 'ok',
      owner: undefined,
    });
    expect(parseBuildReceipt('BUILD_ACK r2 started owner=o1', 'r1')).toBeUndefined();
    expect(parseBuildReceipt('BUILD_ACK r1 started owner=o1 extra', 'r1')).toBeUndefined();
    expect(parseBuildReceipt('Build started; holding 3 class files until BUILD ok', 'r1')).toBeUndefined();
  });

  it('token JSON replies need the word, the token and an object', () => {
    expect(parseTokenJson('DOCTOR_RESULT d1 {"status":"observed"}', 'DOCTOR_RESULT', 'd1')).toEqual({ status: 'observed' });
    expect(parseTokenJson('DOCTOR_RESULT d2 {"status":"observed"}', 'DOCTOR_RESULT', 'd1')).toBeUndefined();
    expect(parseTokenJson('DOCTOR_RESULT d1 [1]', 'DOCTOR_RESULT', 'd1')).toBeUndefined();
  });

  it('RELOAD_STATE is parsed field by field', () => {
    const line = 'RELOAD_STATE r1 pause paused=true pendingClasses=3 pendingActions=1 buildHold=named';
    expect(parseReloadState(line, 'r1')).toEqual({
      action: 'pause',
      paused: true,
      pendingClasses: 3,
      pendingActions: 1,
      buildHold: 'named',
    });
    expect(parseReloadState(line, 'r2')).toBeUndefined();
  });
});
