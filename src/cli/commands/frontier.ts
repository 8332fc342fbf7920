import { Command } from 'commander';
import { prettyJson } from '../../core/canonical.js';
import { JoulebenchError } from '../../core/errors.js';
import { inputsFrontier } from '../../report/arms.js';
import { renderCodeCurves, renderFrontierTable, renderNotPlaced } from '../../report/frontier-table.js';
import { renderFrontierMarkdown } from '../../report/markdown.js';
import type { CliIO } from '../io.js';
import { planOutput, writeByExtension } from '../outputs.js';
import { loadInputsForCli, warnAboutInputs } from '../load-runs.js';

export function frontierCommand(io: CliIO): Command {
  return new Command('frontier')
    .description('the Pareto-optimal arms for accuracy vs J/correct, $/correct and p95 latency (suite runs; code solvers; infer arms are listed as not placed)')
    .argument('<runs...>', 'report JSON files, results JSONL files, code results, infer run files or history run ids (12, #12, last)')
    .option('--json', 'print the frontier as JSON')
    .option('--md', 'print the frontier as Markdown')
    .option('-o, --out <file>', 'write the frontier here; the extension picks the format: .json, .md, .csv, .jsonl (one arm a line), .txt')
    .action(async (specs: string[], flags: { json?: boolean; md?: boolean; out?: string }) => {
      if (flags.json && flags.md) throw new JoulebenchError('E_USAGE', '--json and --md are exclusive');
      if (flags.out) planOutput(flags.out, ['json', 'md', 'csv', 'jsonl', 'txt']);
      const inputs = await loadInputsForCli(specs, true, { cases: false });
      warnAboutInputs(io, inputs);
      const f = inputsFrontier(inputs);
      const renderings = {
        json: () => prettyJson(f),
        md: () => renderFrontierMarkdown(f) + renderNotPlaced(f.not_placed, 'md'),
        csv: async () => (await import('../../report/csv.js')).armsCsv(f.arms, f, f.arm_kinds),
        jsonl: () => f.arms.map((a) => JSON.stringify({ ...a, kind: f.arm_kinds[a.id] ?? null, verdicts: verdictsOf(f, a.id) })).join('\n') + '\n',
        txt: () => renderFrontierTable(f) + renderNotPlaced(f.not_placed, 'text') + renderCodeCurves(f.code_curves),
      };
      if (flags.out) await writeByExtension(flags.out, renderings);
      else io.out(renderings[flags.json ? 'json' : flags.md ? 'md' : 'txt']());
    });
}

function verdictsOf(f: ReturnType<typeof inputsFrontier>, id: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(f.frontiers).map(([axis, fr]) => [axis, fr.verdicts.find((v) => v.id === id) ?? null]));
}
