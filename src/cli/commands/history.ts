import { Command } from 'commander';
import pc from 'picocolors';
import { prettyJson } from '../../core/canonical.js';
import { defaultHistoryPath, History } from '../../report/history.js';
import { fmtJoules, fmtPct, table } from '../../report/format.js';
import type { CliIO } from '../io.js';
import { intAtLeast } from '../options.js';

export function historyCommand(io: CliIO): Command {
  return new Command('history')
    .description('list recorded runs, newest first ($JOULEBENCH_HOME/history.sqlite, default ~/.joulebench)')
    .option('-n, --limit <n>', 'show at most n runs', intAtLeast(1), 20)
    .option('--suite-digest <digest>', 'only runs of this suite digest')
    .option('--json', 'print the rows as JSON')
    .action(async (flags: { limit: number; suiteDigest?: string; json?: boolean }) => {
      const h = await History.open(defaultHistoryPath());
      try {
        const runs = h.list({ limit: flags.limit, ...(flags.suiteDigest ? { suiteDigest: flags.suiteDigest } : {}) });
        if (flags.json) {
          io.out(prettyJson(runs));
          return;
        }
        if (runs.length === 0) {
          io.out(`no runs recorded yet in ${h.path}\n`);
          return;
        }
        const rows: string[][] = [[pc.dim('id'), pc.dim('UTC time'), pc.dim('suite'), pc.dim('digest'), pc.dim('target'), pc.dim('accuracy'), pc.dim('J / correct'), pc.dim('energy source')]];
        for (const r of runs) {
          rows.push([
            `#${r.id}`,
            (r.finished_utc ?? r.recorded_utc).replace(/\.\d+Z$/, 'Z'),
            r.suite ?? '?',
            r.suite_digest ? `${r.suite_digest.slice(0, 19)}…` : 'n/a',
            r.target ?? '?',
            fmtPct(r.accuracy_pct),
            fmtJoules(r.joules_per_correct),
            `${r.energy_source ?? 'none'}${(r.below_floor_count ?? 0) > 0 ? pc.yellow(` ⚠${r.below_floor_count} below floor`) : ''}`,
          ]);
        }
        io.out(table(rows) + '\n');
        io.err(pc.dim(`${h.path}\n`));
      } finally {
        h.close();
      }
    });
}
