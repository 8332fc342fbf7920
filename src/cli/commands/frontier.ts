import { Command } from 'commander';
import { prettyJson } from '../../core/canonical.js';
import { JoulebenchError } from '../../core/errors.js';
import { inputsFrontier } from '../../report/arms.js';
import { renderFrontierTable, renderNotPlaced } from '../../report/frontier-table.js';
import { renderFrontierMarkdown } from '../../report/markdown.js';
import type { CliIO } from '../io.js';
import { loadInputsForCli } from '../load-runs.js';

export function frontierCommand(io: CliIO): Command {
  return new Command('frontier')
    .description('the Pareto-optimal arms for accuracy vs J/correct, $/correct and p95 latency (suite runs; code solvers; infer arms are listed as not placed)')
    .argument('<runs...>', 'report JSON files, results JSONL files, code results, infer run files or history run ids (12, #12, last)')
    .option('--json', 'print the frontier as JSON')
    .option('--md', 'print the frontier as Markdown')
    .action(async (specs: string[], flags: { json?: boolean; md?: boolean }) => {
      if (flags.json && flags.md) throw new JoulebenchError('E_USAGE', '--json and --md are exclusive');
      const f = inputsFrontier(await loadInputsForCli(specs, true, { cases: false }));
      if (flags.json) io.out(prettyJson(f));
      else if (flags.md) io.out(renderFrontierMarkdown(f) + renderNotPlaced(f.not_placed, 'md'));
      else io.out(renderFrontierTable(f) + renderNotPlaced(f.not_placed, 'text'));
    });
}
