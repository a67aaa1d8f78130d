/** Why the app's JVM start time is unknown, in words: for a build's warning (step-words.ts) and a restart's verdict (restart-words.ts). */
import type { AppStartUnknown } from '../outcome/facts.js';

/** Why the app's start time is unknown, as the start of a sentence. */
export function appStartWhy(why: AppStartUnknown): string {
  switch (why.kind) {
    case 'no-pid':
      return `the agent reports no process id for the app (pid ${JSON.stringify(why.pid)})`;
    case 'not-visible':
      return `the app's process ${why.pid} is not visible here (a container or another host?)`;
    case 'elsewhere':
      return `process ${why.pid} here runs in ${why.cwd ?? 'a folder that cannot be read'}, not in the agent's working directory ${why.workingDirectory} (a container or another host?)`;
  }
}
