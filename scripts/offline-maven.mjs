/**
 * Debian's offline Maven repository, passed to Maven by the demo, the recorded samples and the
 * tests (never written into a project: the bundled examples build with an ordinary Maven).
 * Debian's Maven is 3.8, which has no MAVEN_ARGS: the repository goes in MAVEN_OPTS as the
 * `maven.repo.local` system property. Every plugin version the examples pin is in it, so Maven
 * resolves everything there and never reaches for the network.
 */
import fs from 'node:fs';

/** Where Debian's `maven-repo-helper` and `libmaven-*-java` packages install their artifacts. */
const DEBIAN_MAVEN_REPO = '/usr/share/maven-repo';

/**
 * `env` with Debian's offline repository in MAVEN_OPTS, when that repository is on this machine
 * and MAVEN_OPTS does not already name a local repository; otherwise `env` itself.
 * @param {Record<string, string | undefined>} env the environment Maven would get
 * @returns {Record<string, string | undefined>}
 */
export function offlineMavenEnv(env) {
  const opts = env.MAVEN_OPTS ?? '';
  if (!fs.existsSync(DEBIAN_MAVEN_REPO) || opts.includes('-Dmaven.repo.local=')) return env;
  return { ...env, MAVEN_OPTS: `${opts} -Dmaven.repo.local=${DEBIAN_MAVEN_REPO}`.trim() };
}
