/**
 * Writing to stdout when its reader may have gone (`--json | head -1`): an EPIPE ends stdout
 * output quietly instead of crashing with a stack trace; listeners may stop their work. Apart from
 * host.ts, which loads the readers of process facts (tool/proc.ts): `--help` needs this module, not them.
 */
let broken = false;
const listeners = new Set<() => void>();

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  if (broken) return;
  broken = true;
  for (const listener of listeners) listener();
});

/** Writes `text` to stdout unless its reader has gone. */
export function writeStdout(text: string): void {
  if (!broken) process.stdout.write(text);
}

/** True once stdout's reader has gone. */
export function stdoutBroken(): boolean {
  return broken;
}

/** Calls `listener` once stdout's reader has gone; returns a function that removes it. */
export function onStdoutBroken(listener: () => void): () => void {
  if (broken) listener();
  listeners.add(listener);
  return () => listeners.delete(listener);
}
