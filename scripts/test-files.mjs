// Prints the test files for `npm test`, the slowest first. node --test runs two files at a time
// (--test-concurrency=2, one per core): a long file that starts last leaves one core idle at the end,
// so the files measured slowest (each 20 s or more in a full run on 2 cores) go first, the rest by name.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const SLOWEST_FIRST = [
  'test/view/view.test.ts',
  'test/report/html-prompts.test.ts',
  'test/report/html-widths.test.ts',
  'test/code/docker-runner.test.ts',
  'test/report/html-glance.test.ts',
  'test/report/rate-sweep-html.test.ts',
  'test/readme.test.ts',
  'test/cli/load.test.ts',
  'test/cli/load-search.test.ts',
  'test/cli/fuzz.test.ts',
  'test/report/rebuild.test.ts',
  'test/report/report-kinds.test.ts',
  'test/judge/judge-cli.test.ts',
  'test/cli/code.test.ts',
  'test/cli/load-dataset.test.ts',
  'test/cli/outputs.test.ts',
  'test/cli/mmlu-stream.test.ts',
  'test/report/html.test.ts',
  'test/docs.test.ts',
  'test/cli/prices.test.ts',
];

const all = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => join('test', f).split('\\').join('/'))
  .sort();
const slow = SLOWEST_FIRST.filter((f) => all.includes(f));
console.log([...slow, ...all.filter((f) => !slow.includes(f))].join('\n'));
