#!/usr/bin/env bash
# Installs the Java build tools that reclazz-build's demo and tests run, from Debian's apt
# repositories, and only those that are missing. Which ones is the first argument:
#   maven  what `npm run demo` runs: maven, maven-debian-helper, libmaven-compiler-plugin-java
#          and libmaven-resources-plugin-java (Maven plus Debian's offline repository
#          /usr/share/maven-repo, which the demo and the tests pass to Maven:
#          scripts/offline-maven.mjs), and default-jdk-headless when no javac is on PATH;
#   all    (the default) what `npm test` runs: the above, and gradle (Debian's 4.4.1, for
#          fixtures/gradle-app and fixtures/gradle-multi), ant (Debian's 1.10, for
#          fixtures/sap-commerce's `ant build`) and kotlin (Debian's kotlinc 1.3.31, for
#          fixtures/kotlin-classes/build.sh).
# Idempotent: when everything is present it runs no apt command at all.
# Used by .ci/run and the npm scripts; developers run it too: `bash .ci/install-build-tools.sh`.
set -euo pipefail

maven=(maven maven-debian-helper libmaven-compiler-plugin-java libmaven-resources-plugin-java)
case "${1:-all}" in
  maven)
    packages=("${maven[@]}")
    commands=(java javac mvn)
    ;;
  all)
    packages=("${maven[@]}" gradle ant kotlin)
    commands=(java javac javap mvn gradle ant kotlinc)
    ;;
  *)
    echo "install-build-tools: unknown set '$1'; use 'maven' (the demo's) or 'all' (the tests', the default)" >&2
    exit 2
    ;;
esac

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done
if ! command -v javac >/dev/null 2>&1; then
  missing+=(default-jdk-headless)
fi

if ((${#missing[@]} > 0)); then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-build-tools: missing ${missing[*]}, and there is no apt-get here; install ${commands[*]} by hand (a JDK 17 or newer)" >&2
    exit 1
  fi
  sudo=()
  if [[ "$(id -u)" -ne 0 ]]; then
    sudo=(sudo)
  fi
  echo "install-build-tools: installing ${missing[*]}"
  # Recommends are not needed: with --no-install-recommends `mvn compile` and
  # `gradle classes` of the fixtures work and touch no file of a recommended
  # package (checked with strace); it skips ~31 packages (debhelper, autotools, groovy extras).
  # kotlinc works without its recommends too, and the ant build uses only core
  # tasks (javac, mkdir, macrodef, presetdef), none from ant-optional.
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300 update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q \
    --no-install-recommends "${missing[@]}"
fi

# The Maven fixtures pin the plugin versions that Debian 12 ships in /usr/share/maven-repo;
# where that repository is (the demo and the tests then use it), fail loudly if it no longer
# has them. Without it, Maven takes them from Maven Central as for any project.
repo=/usr/share/maven-repo/org/apache/maven/plugins
if [[ -d /usr/share/maven-repo ]]; then
  for jar in \
    "$repo/maven-compiler-plugin/3.10.1/maven-compiler-plugin-3.10.1.jar" \
    "$repo/maven-resources-plugin/3.3.0/maven-resources-plugin-3.3.0.jar"; do
    if [[ ! -f "$jar" ]]; then
      echo "install-build-tools: $jar is missing; fixtures/maven-app/pom.xml pins that version" >&2
      echo "  (versions present: $(ls "$(dirname "$(dirname "$jar")")" 2>/dev/null | tr '\n' ' '))" >&2
      exit 1
    fi
  done
fi

for cmd in "${commands[@]}"; do
  if ! command -v "$cmd" >/dev/null 2>&1; then
    echo "install-build-tools: '$cmd' is still not on PATH" >&2
    exit 1
  fi
done
