/**
 * A command line as a shell reads it: the words the scripts print for a reader to paste
 * (`npm run demo`'s `$ reclazz-build ...` lines), quoted where a shell would split or expand them.
 */

/** Characters a POSIX shell reads literally in a word. */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * `words` joined into one line that `sh` splits back into exactly these words: a word with any
 * other character (a space, `$`, a quote...) or an empty one goes in single quotes.
 * @param {readonly string[]} words
 * @returns {string}
 */
export function shellLine(words) {
  return words.map((word) => (PLAIN.test(word) ? word : `'${word.replaceAll("'", `'"'"'`)}'`)).join(' ');
}
