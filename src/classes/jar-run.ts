/**
 * Whether the app's JVM runs this project's classes from a jar instead of the class output
 * directory the build writes: `java -jar target/app.jar` (a Spring Boot fat jar keeps them in
 * `BOOT-INF/classes/`), or a jar before that directory on the class path. A build there reaches
 * only classes already loaded, by redefinition; a class loaded later, a new class and every class
 * after a restart come from the jar. Which entry the JVM loads a class from is placement.ts's rule.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { JarRun } from '../outcome/facts.js';
import { binaryClassName } from './changes.js';
import { Placement, type JvmPaths } from './placement.js';
import { isInside } from '../util/fs.js';

/** Class files looked at in a folder walk before it gives up: a large tree has its classes in the first ones too. */
const WALK_LIMIT = 5000;

/**
 * The first of `files` (class files, absolute) in one of the class output directories `dirs` that
 * the JVM of `paths` loads from a jar instead, or undefined: none, or its class path is not known.
 */
export function jarRunOf(paths: JvmPaths, files: Iterable<string>, dirs: readonly string[]): JarRun | undefined {
  if (paths.classPath.length === 0 || dirs.length === 0) return undefined;
  const placement = new Placement(undefined, paths);
  for (const file of files) {
    const dir = dirs.find((d) => isInside(file, d));
    const jar = dir === undefined ? undefined : placement.jarInstead(file, dir);
    if (jar !== undefined && dir !== undefined) return { jar, dir, className: binaryClassName(dir, file) };
  }
  return undefined;
}

/** The class files under each of `dirs` (absolute), depth first, at most {@link WALK_LIMIT} in all; unreadable folders are skipped. */
export function* classFilesIn(dirs: readonly string[]): Generator<string> {
  let seen = 0;
  for (const dir of dirs) {
    const stack = [dir];
    while (stack.length > 0) {
      const folder = stack.pop()!;
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(folder, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of entries) {
        const file = path.join(folder, entry.name);
        if (entry.isDirectory()) stack.push(file);
        else if (entry.name.endsWith('.class')) {
          if (++seen > WALK_LIMIT) return;
          yield file;
        }
      }
    }
  }
}
