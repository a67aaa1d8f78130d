/** --path-map: agent paths (an app in a container) read as local ones, and back for advice. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePathMap, PathMapError, toAgent, toLocal } from '../../src/agent/path-map.js';

describe('parsePathMap', () => {
  it('takes <absolute agent path>=<local path>, the local one resolved against the base folder', () => {
    expect(parsePathMap('/app/=shop', '/home/me')).toEqual({ agent: '/app', local: path.resolve('/home/me/shop') });
    expect(parsePathMap('C:\\srv\\app=/x', '/b')).toEqual({ agent: 'C:\\srv\\app', local: '/x' });
    expect(parsePathMap('/=/mnt/root', '/b')).toEqual({ agent: '/', local: '/mnt/root' });
  });

  it.each(['app=.', '/app', '=/x', '/app='])('refuses %j, naming it and the shape', (value) => {
    expect(() => parsePathMap(value, '/b')).toThrow(PathMapError);
    expect(() => parsePathMap(value, '/b')).toThrow(`--path-map ${JSON.stringify(value)}: expected <agent path>=<local path>`);
  });
});

describe('toLocal and toAgent', () => {
  const map = [
    { agent: '/app', local: '/home/me/shop' },
    { agent: '/app/lib', local: '/home/me/lib' },
  ];

  it('replaces the longest matching prefix by whole segments; others stay as they are', () => {
    expect(toLocal(map, '/app/target/classes')).toBe('/home/me/shop/target/classes');
    expect(toLocal(map, '/app/lib/target/classes')).toBe('/home/me/lib/target/classes');
    expect(toLocal(map, '/app')).toBe('/home/me/shop');
    expect(toLocal(map, '/application/x')).toBe('/application/x');
    expect(toLocal([], '/app/x')).toBe('/app/x');
  });

  it("turns local paths back into the agent's", () => {
    expect(toAgent(map, '/home/me/shop/target/classes')).toBe('/app/target/classes');
    expect(toAgent(map, '/home/me/lib')).toBe('/app/lib');
    expect(toAgent(map, '/home/me/shopping')).toBe('/home/me/shopping');
    expect(toAgent([{ agent: 'C:\\srv', local: '/x' }], '/x/a/b')).toBe('C:\\srv\\a\\b');
  });
});
