import { describe, expect, it } from 'vitest';
import { neverEndingArgument, type BuildCommand } from '../../src/tool/resolve.js';

const gradle = (...args: string[]): BuildCommand => ({ kind: 'gradle', file: 'gradle', args, wrapper: false, cwd: '/' });

describe("refusing Gradle's continuous mode", () => {
  it.each([['--continuous'], ['-t'], ['-qt'], ['-tq'], ['--offline', '-qt', 'classes']])('refuses %j', (...args) => {
    expect(neverEndingArgument(gradle(...args))).toBe(args.find((a) => a.startsWith('-') && a.includes('t') && a !== '--offline'));
  });

  it.each([['-Ptest=1'], ['-Dtarget=x'], ['-xtest'], ['--offline', '-q', 'classes'], ['test']])('allows %j', (...args) => {
    expect(neverEndingArgument(gradle(...args))).toBeUndefined();
  });

  it('leaves Maven alone', () => {
    expect(neverEndingArgument({ kind: 'mvn', file: 'mvn', args: ['-t', 'x'], wrapper: false, cwd: '/' })).toBeUndefined();
  });
});
