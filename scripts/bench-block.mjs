/**
 * The tables of docs/performance.md, written by `npm run docs` from the last full bench run
 * kept in bench/results.json (`npm run bench` writes it), in the bench's own table format
 * (bench/report.mjs): the machine and load it ran on, then every figure beside its floor.
 * test/package/samples.test.ts fails while docs/performance.md shows another run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tables } from '../bench/report.mjs';

/**
 * The block for the id `bench-last-run`.
 * @param {string} root the checkout
 * @returns {string}
 * @throws {Error} when bench/results.json is missing or not JSON
 */
export function benchBlock(root) {
  const results = JSON.parse(fs.readFileSync(path.join(root, 'bench', 'results.json'), 'utf8'));
  const { machine } = results;
  const java = /version "([^"]+)"/.exec(machine.java)?.[1] ?? machine.java;
  const load = (at) => machine.loadAverage[at][0].toFixed(1);
  const when = `${results.date.slice(0, 10)}, ${machine.cores} cores, ${machine.cpu}, Node ${machine.node.replace(/^v/, '')}, Java ${java}`;
  const how = `${results.order} order, ${Math.round(results.durationS)} s, load average ${load('start')} at the start and ${load('end')} at the end`;
  return `Last full run (${when}; ${how}):\n\n${tables(results.figures)}${nodeStartLine(results.figures)}`;
}

/** Node's own start-up in that run (the overhead figure's context), when the run measured it. */
function nodeStartLine(figures) {
  const overhead = figures.find((f) => f.id === 'overhead');
  if (overhead?.nodeStartMs === undefined) return '';
  const ms = (value) => `${Math.round(value)} ms`;
  const withoutCa =
    overhead.nodeStartWithoutExtraCaMs === undefined
      ? ''
      : `; \`NODE_EXTRA_CA_CERTS\` was set on that machine, and without it Node took ${ms(overhead.nodeStartWithoutExtraCaMs)} and the whole run ${ms(overhead.runWithoutExtraCaMs)}`;
  return `\n\nNode's own start-up in the same rounds: \`node -e 0\` took ${ms(overhead.nodeStartMs)}${withoutCa}.`;
}
