/**
 * What the agent watches by its JVM's command line, as its source decides it (GitHub
 * onurkat/reclazz: config/AgentConfig.java parse, platform/SpringBootContext.java
 * autoDetectOutputDirs, platform/PlatformDetector.java): the agent's options found on the
 * launcher's line or in the JVM's environment variables, split as the agent splits them, and the
 * directories they make it watch.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentOptions, agentWatch, excludedName, readJvm, type JvmFacts } from '../../src/agent/jvm-options.js';
import { tempDir } from '../support/cli.js';

const noFiles = () => undefined;
const jar = '/opt/reclazz/reclazz-agent-1.3.0.jar';

describe('readJvm', () => {
  it('finds the reclazz -javaagent and the class path on the launcher line; program arguments after the main class do not count', () => {
    const jvm = readJvm(
      [
        '/usr/bin/java',
        '-Xmx1g',
        `-javaagent:${jar}=watchDirs=/p/target/classes`,
        '-cp',
        '/p/target/classes:/m2/x.jar',
        'com.acme.App',
        '-javaagent:/x/reclazz.jar=no',
      ],
      {},
      '/p',
      noFiles,
    );
    expect(jvm).toEqual({ agentArgs: 'watchDirs=/p/target/classes', classPath: ['/p/target/classes', '/m2/x.jar'], hybris: false });
  });

  it('takes -classpath, --class-path=, -jar (its jar is the class path), CLASSPATH, or "."', () => {
    const line = (...args: string[]) => ['java', `-javaagent:${jar}`, ...args];
    expect(readJvm(line('-classpath', 'a:b', 'Main'), {}, '/', noFiles)?.classPath).toEqual(['a', 'b']);
    expect(readJvm(line('--class-path=c', 'Main'), {}, '/', noFiles)?.classPath).toEqual(['c']);
    expect(readJvm(line('-cp', 'a', '-jar', 'app.jar', 'x'), {}, '/', noFiles)?.classPath).toEqual(['app.jar']);
    expect(readJvm(line('Main'), { CLASSPATH: 'e:f' }, '/', noFiles)?.classPath).toEqual(['e', 'f']);
    expect(readJvm(line('Main'), {}, '/', noFiles)?.classPath).toEqual(['.']);
    // Options with a value of their own: the value is no main class.
    expect(readJvm(line('--add-opens', 'java.base/java.lang=ALL-UNNAMED', '-cp', 'g', 'Main'), {}, '/', noFiles)?.classPath).toEqual(['g']);
  });

  it('finds the agent in JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS and _JAVA_OPTIONS (quoted parts kept whole); only _JAVA_OPTIONS can change the class path', () => {
    const tool = readJvm(
      ['java', '-cp', 'a', 'Main'],
      { JAVA_TOOL_OPTIONS: `-javaagent:"${jar}=watchDirs=/p q/classes" -Djava.class.path=z` },
      '/',
      noFiles,
    );
    expect(tool).toEqual({ agentArgs: 'watchDirs=/p q/classes', classPath: ['a'], hybris: false });
    expect(readJvm(['java', 'Main'], { JDK_JAVA_OPTIONS: `-javaagent:${jar}=x=1` }, '/', noFiles)?.agentArgs).toBe('x=1');
    expect(readJvm(['java', '-cp', 'a', 'Main'], { _JAVA_OPTIONS: '-Djava.class.path=z' }, '/', noFiles)?.classPath).toEqual(['z']);
  });

  it("the agent built from its repository is read by the name docs/connect.md gives it, not by the build's own", () => {
    const options = (agent: string) =>
      readJvm(['java', `-javaagent:${agent}=watchDirs=/app/target/classes`, 'Main'], {}, '/', noFiles)?.agentArgs;
    expect(options('/work/reclazz/agent/build/libs/agent-1.3.0.jar')).toBeUndefined();
    expect(options('/path/to/reclazz-agent-1.3.0.jar')).toBe('watchDirs=/app/target/classes');
    expect(options('/home/me/.m2/repository/com/onurkat/reclazz/reclazz-agent/1.3.0/reclazz-agent-1.3.0.jar')).toBe(
      'watchDirs=/app/target/classes',
    );
  });

  it("no reclazz agent (attached at run time, or another agent's jar), or two: its options are unknown", () => {
    expect(readJvm(['java', '-javaagent:/x/other-agent.jar=a=b', 'Main'], {}, '/', noFiles)?.agentArgs).toBeUndefined();
    expect(readJvm(['java', `-javaagent:${jar}`, `-javaagent:${jar}=a=b`, 'Main'], {}, '/', noFiles)?.agentArgs).toBeUndefined();
    expect(readJvm(['java', `-javaagent:${jar}`, 'Main'], {}, '/', noFiles)?.agentArgs).toBe('');
  });

  it('expands an argument file; one that cannot be read leaves everything unknown', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'args'), `-javaagent:${jar}=watchDirs=w\n-cp "x y:z"\n`);
    expect(readJvm(['java', '@args', 'Main'], {}, dir, (file) => fs.readFileSync(file, 'utf8'))).toEqual({
      agentArgs: 'watchDirs=w',
      classPath: ['x y', 'z'],
      hybris: false,
    });
    expect(readJvm(['java', '@missing', 'Main'], {}, dir, noFiles)).toEqual({ agentArgs: undefined, classPath: undefined, hybris: false });
  });

  it('is no JVM without a java launcher; notes SAP Commerce markers', () => {
    expect(readJvm(['/opt/app/bin/shop', `-javaagent:${jar}`], {}, '/', noFiles)).toBeUndefined();
    expect(readJvm(['javaw.exe', '-Dplatform.home=/h/bin/platform', 'Main'], {}, '/', noFiles)?.hybris).toBe(true);
    expect(readJvm(['java', 'Main'], { HYBRIS_BIN_DIR: '/h/bin' }, '/', noFiles)?.hybris).toBe(true);
  });
});

describe('agentOptions (AgentConfig.parse)', () => {
  it('splits on a comma only before a known key and =, each at its first =, trimmed, the last of a key winning', () => {
    expect(agentOptions('watchDirs=/a,b;/c,excludePatterns= *Test.class ,bogus=1,watchDirs=/d')).toEqual(
      new Map([
        ['watchDirs', '/d'],
        ['excludePatterns', '*Test.class ,bogus=1'],
      ]),
    );
    // A space after the comma: no known key follows it, so it is part of the value before.
    expect(agentOptions('watchDirs=/a, excludePatterns=x')).toEqual(new Map([['watchDirs', '/a, excludePatterns=x']]));
    expect(agentOptions('')).toEqual(new Map());
    expect(agentOptions('noequals')).toEqual(new Map());
  });
});

describe('agentWatch (SpringBootContext)', () => {
  const facts = (agentArgs: string, classPath: string[] | undefined = []): JvmFacts => ({ agentArgs, classPath, hybris: false });

  it('watchDirs: ;-separated, relative ones against the working directory, those that are directories; with none left, nothing', () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'a'));
    fs.mkdirSync(path.join(dir, 'b'));
    const isDir = (p: string) => fs.existsSync(p) && fs.statSync(p).isDirectory();
    expect(agentWatch(facts(`watchDirs=a; ${dir}/b ;missing;`), dir, isDir)).toEqual({
      roots: [path.join(dir, 'a'), path.join(dir, 'b')],
      from: 'watchDirs',
      excludePatterns: [],
      autoCompile: false,
      debounceMs: 500,
      classPath: [],
    });
    expect(agentWatch(facts('watchDirs=missing', [path.join(dir, 'a', 'target', 'classes')]), dir, isDir)?.roots).toEqual([]);
  });

  it('debounceMs: a whole number held to 0..60000, anything else the default 500 (AgentConfig)', () => {
    const debounce = (value: string) => agentWatch(facts(`watchDirs=/x,debounceMs=${value}`), '/', () => true)?.debounceMs;
    expect(debounce('10000')).toBe(10_000);
    expect(debounce('0')).toBe(0);
    expect(debounce('-5')).toBe(0);
    expect(debounce('99999')).toBe(60_000);
    expect(debounce('1.5')).toBe(500);
    expect(debounce('soon')).toBe(500);
    expect(agentWatch(facts('watchDirs=/x'), '/', () => true)?.debounceMs).toBe(500);
  });

  it('without watchDirs: class path directories ending in /target/classes, /target/test-classes or holding /build/classes/', () => {
    const dir = tempDir();
    const dirs = ['m/target/classes', 'm/target/test-classes', 'g/build/classes/kotlin/main', 'out/production/x', 'g/build/resources/main'];
    for (const d of dirs) fs.mkdirSync(path.join(dir, d), { recursive: true });
    const isDir = (p: string) => fs.existsSync(p) && fs.statSync(p).isDirectory();
    const cp = [
      ...dirs.map((d) => path.join(dir, d)),
      `${path.join(dir, 'm/target/classes')}/`,
      'target/classes',
      '/nowhere/target/classes',
    ];
    expect(agentWatch(facts('platform=spring', cp), dir, isDir)).toMatchObject({
      from: 'class-path',
      roots: [
        path.join(dir, 'm/target/classes'),
        path.join(dir, 'm/target/test-classes'),
        path.join(dir, 'g/build/classes/kotlin/main'),
        path.join(dir, 'm/target/classes'),
      ],
    });
  });

  it('the class path: its entries in order, relative ones against the working directory, whatever the agent watches', () => {
    const dir = tempDir();
    for (const d of ['svc/target/classes', 'shared/target/classes']) fs.mkdirSync(path.join(dir, d), { recursive: true });
    fs.writeFileSync(path.join(dir, 'lib.jar'), '');
    const isDir = (p: string) => fs.existsSync(p) && fs.statSync(p).isDirectory();
    const cp = ['svc/target/classes', path.join(dir, 'shared/target/classes'), 'lib.jar', 'svc/target/classes'];
    const watch = agentWatch(facts('watchDirs=svc/target/classes', cp), dir, isDir);
    expect(watch).toMatchObject({ roots: [path.join(dir, 'svc/target/classes')] });
    expect(watch?.classPath).toEqual([
      path.join(dir, 'svc/target/classes'),
      path.join(dir, 'shared/target/classes'),
      path.join(dir, 'lib.jar'),
    ]);
    expect(agentWatch(facts('watchDirs=svc/target/classes', undefined), dir, isDir)?.classPath).toEqual([]);
  });

  it("with no match, the working directory's target/classes and build/classes/java/main; an unknown class path decides nothing", () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'build', 'classes', 'java', 'main'), { recursive: true });
    const isDir = (p: string) => fs.existsSync(p) && fs.statSync(p).isDirectory();
    expect(agentWatch(facts('', ['app.jar']), dir, isDir)).toMatchObject({
      from: 'working-directory',
      roots: [path.join(dir, 'build', 'classes', 'java', 'main')],
    });
    expect(agentWatch({ agentArgs: '', classPath: undefined, hybris: false }, dir, isDir)).toBeUndefined();
  });

  it('SAP Commerce watches by its own rules (not read here), unless platform names another; autoCompile and excludePatterns are read', () => {
    const isDir = () => true;
    expect(agentWatch(facts('platform=hybris,watchDirs=/a'), '/', isDir)).toBeUndefined();
    expect(agentWatch(facts('hybrisHome=/h,watchDirs=/a'), '/', isDir)).toBeUndefined();
    expect(agentWatch({ ...facts('watchDirs=/a'), hybris: true }, '/', isDir)).toBeUndefined();
    expect(agentWatch({ ...facts('platform=Generic,watchDirs=/a'), hybris: true }, '/', isDir)?.roots).toEqual(['/a']);
    expect(agentWatch(facts('watchDirs=/a,autoCompile=TRUE,excludePatterns=*Test.class; B?.class'), '/', isDir)).toMatchObject({
      autoCompile: true,
      excludePatterns: ['*Test.class', 'B?.class'],
    });
  });
});

describe('excludedName (AgentConfig.globToRegex, isExcluded)', () => {
  it('matches the whole file name, case-sensitively; * any run, ? one character, other characters as they are', () => {
    const excluded = excludedName(['*Test.class', 'B?.class', 'a+b(1).class']);
    expect(excluded('GreeterTest.class')).toBe('*Test.class');
    expect(excluded('GreeterTest.classx')).toBeUndefined();
    expect(excluded('greetertest.class')).toBeUndefined();
    expect(excluded('B1.class')).toBe('B?.class');
    expect(excluded('B12.class')).toBeUndefined();
    expect(excluded('a+b(1).class')).toBe('a+b(1).class');
    expect(excluded('aab(1).class')).toBeUndefined();
  });
});
