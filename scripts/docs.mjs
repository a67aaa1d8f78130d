/**
 * Writes the README's "Exit statuses" table from the one exit-status table (src/outcome/exit.ts,
 * rendered by src/report/help.ts), between its two marker comments. Run after `npm run build`
 * (`npm run docs`); test/outcome/exit.test.ts fails while the README is out of date.
 */
import fs from 'node:fs';
import { exitMarkdown } from '../dist/report/help.js';

const START = '<!-- exit-statuses: written by npm run docs -->';
const END = '<!-- /exit-statuses -->';
const readme = fs.readFileSync('README.md', 'utf8');
const from = readme.indexOf(START);
const to = readme.indexOf(END);
if (from === -1 || to < from) throw new Error(`README.md has no ${START} ... ${END} section`);
fs.writeFileSync('README.md', `${readme.slice(0, from + START.length)}\n${exitMarkdown()}\n${readme.slice(to)}`);
