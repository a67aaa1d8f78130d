/** loadConfig: where the config is found, how it is validated, and what an error names. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/cli/config.js';
import { resolveSettings } from '../../src/cli/options.js';
import { tempDir } from '../support/cli.js';

function write(dir: string, file: string, value: unknown): string {
  const full = path.join(dir, file);
  fs.mkdirSync(path.dirname(full), { recursive: true });
  fs.writeFileSync(full, typeof value === 'string' ? value : JSON.stringify(value));
  return full;
}

function error(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('reads reclazz.config.json here or above, resolving paths against its folder', () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, '.git'));
    const file = write(root, 'reclazz.config.json', {
      portFile: 'app/.reclazz/agent.port',
      classesDirs: ['app/build/classes/kotlin/main'],
      verifyTimeoutMs: 60000,
    });
    const sub = path.join(root, 'app', 'src');
    fs.mkdirSync(sub, { recursive: true });
    expect(loadConfig(sub)).toEqual({
      file,
      config: {
        portFile: path.join(root, 'app', '.reclazz', 'agent.port'),
        classesDirs: [path.join(root, 'app', 'build', 'classes', 'kotlin', 'main')],
        verifyTimeoutMs: 60000,
      },
    });
  });

  it('reads the "reclazz" key of package.json, and skips a package.json without one', () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, '.git'));
    const file = write(root, 'package.json', { name: 'x', reclazz: { gradleArgs: [':app:classes'], timeoutMs: 8000 } });
    write(root, 'tools/package.json', { name: 'inner' });
    expect(loadConfig(path.join(root, 'tools'))).toEqual({ file, config: { gradleArgs: [':app:classes'], timeoutMs: 8000 } });
  });

  it('prefers reclazz.config.json to package.json in the same folder, and stops at the checkout root', () => {
    const outer = tempDir();
    write(outer, 'reclazz.config.json', { timeoutMs: 1 });
    const root = path.join(outer, 'repo');
    fs.mkdirSync(path.join(root, '.git'), { recursive: true });
    expect(loadConfig(root)).toEqual({ config: {} });
    write(root, 'package.json', { reclazz: { timeoutMs: 2 } });
    const own = write(root, 'reclazz.config.json', { timeoutMs: 3 });
    expect(loadConfig(root)).toEqual({ file: own, config: { timeoutMs: 3 } });
  });

  it('names the file, the key and the expected shape of an invalid value', () => {
    const dir = tempDir();
    const file = write(dir, 'reclazz.config.json', { timeoutMs: '5s' });
    const e = error(() => loadConfig(dir));
    expect(e.file).toBe(file);
    expect(e.key).toBe('timeoutMs');
    expect(e.expected).toBe('a whole number of milliseconds, 1 or more, e.g. 5000');
    expect(e.message).toBe(
      `invalid config in ${file}: key "timeoutMs": expected a whole number of milliseconds, 1 or more, e.g. 5000, got "5s"`,
    );
  });

  it('names the package.json key path, array elements and unknown keys', () => {
    const dir = tempDir();
    const pkg = write(dir, 'package.json', { reclazz: { classesDirs: ['ok', ''] } });
    expect(error(() => loadConfig(dir)).message).toBe(
      `invalid config in ${pkg}: key "reclazz.classesDirs[1]": expected an array of non-empty path strings, e.g. ["build/classes/kotlin/main"], got ""`,
    );
    write(dir, 'package.json', { reclazz: { timeout: 5000 } });
    const unknown = error(() => loadConfig(dir));
    expect(unknown.key).toBe('reclazz.timeout');
    expect(unknown.message).toContain('key "reclazz.timeout" is not a known key; expected one of port, portFile, timeoutMs');
    write(dir, 'package.json', { reclazz: [1] });
    expect(error(() => loadConfig(dir)).message).toContain('key "reclazz": expected an object with any of the keys');
  });

  it('reports broken JSON and a missing explicit file', () => {
    const dir = tempDir();
    const file = write(dir, 'reclazz.config.json', '{"timeoutMs": 5000,}');
    expect(error(() => loadConfig(dir)).message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid JSON`));
    expect(error(() => loadConfig(dir, 'other.json')).message).toBe(`config file ${path.join(dir, 'other.json')} does not exist`);
    write(dir, 'sub/package.json', { name: 'no-key' });
    expect(error(() => loadConfig(dir, 'sub/package.json')).message).toContain('has no "reclazz" key');
  });
});

describe('resolveSettings: command line, then environment, then config, then defaults', () => {
  const config = {
    port: 4000,
    portFile: '/cfg/agent.port',
    timeoutMs: 7000,
    waitMs: 0,
    classesDirs: ['/cfg/classes'],
    restartTimeoutMs: 60000,
  };

  it('takes the config where the command line says nothing', () => {
    expect(resolveSettings({}, config, '/here', {})).toEqual({
      port: 4000,
      portFiles: ['/cfg/agent.port'],
      timeoutMs: 7000,
      verifyTimeoutMs: 30000,
      waitMs: 0,
      waitForAgentMs: 0,
      restartTimeoutMs: 60000,
      classDirs: ['/cfg/classes'],
      pathMap: [],
    });
  });

  it("takes --path-map over the config's pathMap, whole", () => {
    const fromConfig = [{ agent: '/app', local: '/cfg' }];
    const fromFlag = [{ agent: '/srv', local: '/here' }];
    expect(resolveSettings({}, { ...config, pathMap: fromConfig }, '/here', {}).pathMap).toEqual(fromConfig);
    expect(resolveSettings({ pathMap: fromFlag }, { ...config, pathMap: fromConfig }, '/here', {}).pathMap).toEqual(fromFlag);
  });

  it('lets the command line win, whole: --port-file drops the config port too', () => {
    expect(
      resolveSettings({ portFile: ['x.port', 'y.port'], timeout: 10, restartTimeout: 9000, classesDir: ['out'] }, config, '/here', {}),
    ).toEqual({
      portFiles: ['/here/x.port', '/here/y.port'],
      timeoutMs: 10,
      verifyTimeoutMs: 30000,
      waitMs: 0,
      waitForAgentMs: 0,
      restartTimeoutMs: 9000,
      classDirs: ['/here/out'],
      pathMap: [],
    });
  });

  it('lets RECLAZZ_PORT / RECLAZZ_PORT_FILE win over the config port', () => {
    expect(resolveSettings({}, config, '/here', { RECLAZZ_PORT: '5000' })).not.toHaveProperty('port');
    expect(resolveSettings({}, config, '/here', { RECLAZZ_PORT_FILE: 'p' })).not.toHaveProperty('portFiles');
  });
});
