/** The stand-in JVMs of in-process fake agents (src/fake-agent/jvm.ts), found with `ps`. */
import { execFileSync } from 'node:child_process';

/** `ps` lines of live (not zombie) stand-in JVMs started by the process `parentPid`. */
export function standInsOf(parentPid: number): string[] {
  return execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(`reclazz-fake-jvm parent=${parentPid}`) && !/^\s*\d+\s+Z/.test(line));
}
