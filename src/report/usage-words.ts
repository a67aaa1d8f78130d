/**
 * The words of the command line's own usage errors (exit 2, nothing sent): a build command
 * it does not know, and one of its options placed where the build tool would get it.
 */

/**
 * An operand that is not gradle, mvn or a subcommand; `closest`: the name it was most likely meant
 * to be (a typo of `doctor`, `mvn`...).
 */
export function unknownToolText(word: string, closest: string | undefined): string {
  const guess = closest === undefined ? '' : ` (did you mean ${closest}?)`;
  return `unknown build tool ${JSON.stringify(word)}${guess}: use gradle, mvn, or put any other command after --`;
}

/**
 * `option` is reclazz-build's, but stands after the build tool's name `tool`, where it would go to
 * the build tool (Maven's "Unrecognized option", Gradle's "Unknown command-line option").
 * `watch`: the words before the tool name.
 */
export function ownOptionAfterToolText(option: string, tool: string, watch: boolean): string {
  const prefix = watch ? 'reclazz-build watch' : 'reclazz-build';
  return `${option} is an option of reclazz-build, not of ${tool}: put it before ${tool} (${prefix} ${option} ${tool} ...); everything after ${tool} goes to ${tool}`;
}
