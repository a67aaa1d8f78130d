/**
 * The stand-in JVM of a `--jar` run loads as `java -jar` does (src/fake-agent/loaded.ts): the jar
 * is its whole class path, with the entries its manifest's Class-Path names after it, and a Spring
 * Boot executable jar's launcher adds its BOOT-INF/classes and BOOT-INF/lib jars. The folder its
 * agent watches is not on that class path: the truth oracle must say the jar's bytes run.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jvmTruth } from '../../src/fake-agent/truth.js';
import { writeJar } from '../support/zip.js';
import { agentFor, sha, tempDir, writeClass } from './fixture.js';

const GREETER = 'com.acme.Greeter';

/** An app folder whose build writes Greeter (`folder-v1`) to target/classes, the folder its agent watches. */
function app(): { dir: string; classes: string; jar: string } {
  const dir = tempDir();
  const classes = join(dir, 'target', 'classes');
  writeClass(classes, 'com/acme/Greeter.class', 'folder-v1');
  return { dir, classes, jar: join(dir, 'target', 'app.jar') };
}

describe('a --jar run: the JVM loads what java -jar loads', () => {
  it('the jar is the whole class path: a class it holds runs its bytes, not the watched folder copy', async () => {
    const { dir, classes, jar } = app();
    writeJar(jar, { 'META-INF/MANIFEST.MF': 'Manifest-Version: 1.0\r\nMain-Class: com.acme.Main\r\n', 'com/acme/Greeter.class': 'jar-v0' });
    const agent = await agentFor({ watchDirs: [classes], jar, appDir: dir, standInJvm: false });
    expect(jvmTruth(agent, GREETER)).toEqual({ loaded: true, sha256: sha('jar-v0'), source: `${jar}!/com/acme/Greeter.class` });
  });

  it("the manifest's Class-Path entries come after the jar, relative to its folder: a class only there loads from there", async () => {
    const { dir, classes, jar } = app();
    writeClass(join(dir, 'target', 'lib-classes'), 'com/acme/Helper.class', 'helper-v0');
    mkdirSync(join(dir, 'target', 'lib'));
    writeJar(join(dir, 'target', 'lib', 'dep.jar'), { 'com/acme/Dep.class': 'dep-v0', 'com/acme/Greeter.class': 'dep-greeter' });
    writeJar(jar, {
      'META-INF/MANIFEST.MF': 'Manifest-Version: 1.0\r\nClass-Path: lib/dep.jar lib-cl\r\n asses/\r\nMain-Class: com.acme.Main\r\n\r\n',
      'com/acme/Main.class': 'main-v0',
    });
    const agent = await agentFor({ watchDirs: [classes], jar, appDir: dir, standInJvm: false });
    expect(jvmTruth(agent, GREETER)).toMatchObject({ loaded: true, sha256: sha('dep-greeter') });
    expect(jvmTruth(agent, 'com.acme.Dep')).toMatchObject({ loaded: true, sha256: sha('dep-v0') });
    expect(jvmTruth(agent, 'com.acme.Helper')).toMatchObject({ loaded: true, sha256: sha('helper-v0') });
    expect(jvmTruth(agent, 'com.acme.Main')).toMatchObject({ loaded: true, sha256: sha('main-v0') });
  });

  it("a Spring Boot executable jar: its launcher loads BOOT-INF/classes, then BOOT-INF/lib's jars, after the jar's own entries", async () => {
    const { dir, classes, jar } = app();
    const lib = join(tempDir(), 'lib.jar');
    writeJar(lib, { 'com/acme/Lib.class': 'lib-v0', 'com/acme/Greeter.class': 'lib-greeter' });
    writeJar(jar, {
      'META-INF/MANIFEST.MF':
        'Manifest-Version: 1.0\r\nMain-Class: org.springframework.boot.loader.launch.JarLauncher\r\nStart-Class: com.acme.App\r\n',
      'org/springframework/boot/loader/launch/JarLauncher.class': 'launcher',
      'BOOT-INF/classes/com/acme/Greeter.class': 'boot-v0',
      'BOOT-INF/lib/lib.jar': readFileSync(lib),
    });
    const agent = await agentFor({ watchDirs: [classes], jar, appDir: dir, standInJvm: false });
    expect(jvmTruth(agent, GREETER)).toEqual({ loaded: true, sha256: sha('boot-v0'), source: `${jar}!/BOOT-INF/classes/com/acme/Greeter.class` });
    expect(jvmTruth(agent, 'com.acme.Lib')).toEqual({ loaded: true, sha256: sha('lib-v0'), source: `${jar}!/BOOT-INF/lib/lib.jar!/com/acme/Lib.class` });
    expect(jvmTruth(agent, 'org.springframework.boot.loader.launch.JarLauncher')).toMatchObject({ loaded: true, sha256: sha('launcher') });
  });

  it('a jar without the launcher as its Main-Class: BOOT-INF/classes is no class path entry (the JDK does not look there)', async () => {
    const { dir, classes, jar } = app();
    writeJar(jar, { 'META-INF/MANIFEST.MF': 'Manifest-Version: 1.0\r\nMain-Class: com.acme.Main\r\n', 'BOOT-INF/classes/com/acme/Greeter.class': 'boot-v0' });
    const agent = await agentFor({ watchDirs: [classes], jar, appDir: dir, standInJvm: false });
    expect(jvmTruth(agent, GREETER)).toEqual({ loaded: false, sha256: undefined });
  });
});
