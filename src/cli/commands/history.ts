import { Command } from 'commander';
import { pc } from '../../report/colors.js';
import { prettyJson } from '../../core/canonical.js';
import { defaultHistoryPath, History, historyKind, type HistoryRun } from '../../report/history.js';
import { fmtJoules, fmtPct, table } from '../../report/format.js';
import type { CliIO } from '../io.js';
import { intAtLeast } from '../options.js';

export function historyCommand(io: CliIO): Command {
  return new Command('history')
    .description('list recorded runs, newest first ($JOULEBENCH_HOME/history.sqlite, default ~/.joulebench)')
    .option('-n, --limit <n>', 'show at most n runs', intAtLeast(1), 20)
    .option('--suite-digest <digest>', 'only runs of this suite digest')
    .option('--sweep <id>', "only the runs of this sweep (its id is in sweep.json and each run's receipt)")
    .option('--json', 'print the rows as JSON')
    .action(async (flags: { limit: number; suiteDigest?: string; sweep?: string; json?: boolean }) => {
      const h = await History.open(defaultHistoryPath());
      try {
        const runs = h.list({ limit: flags.limit, ...(flags.suiteDigest ? { suiteDigest: flags.suiteDigest } : {}), ...(flags.sweep ? { sweepId: flags.sweep } : {}) });
        if (flags.json) {
          io.out(prettyJson(runs.map((r) => ({ ...r, kind: historyKind(r.kind), format: r.kind }))));
          return;
        }
        if (runs.length === 0) {
          io.out(`no runs recorded yet in ${h.path}\n`);
          return;
        }
        const rows: string[][] = [[pc.dim('id'), pc.dim('kind'), pc.dim('UTC time'), pc.dim('suite'), pc.dim('digest'), pc.dim('target'), pc.dim('accuracy'), pc.dim('J / correct'), pc.dim('energy source')]];
        for (const r of runs) {
          rows.push([
            `#${r.id}`,
            historyKind(r.kind),
            (r.finished_utc ?? r.recorded_utc).replace(/\.\d+Z$/, 'Z'),
            r.suite ?? '?',
            r.suite_digest ? shortDigest(r.suite_digest) : 'n/a',
            r.target ?? '?',
            r.accuracy_pct === null ? noAccuracy(r) : fmtPct(r.accuracy_pct),
            r.joules_per_correct === null && r.accuracy_pct === null ? noAccuracy(r) : fmtJoules(r.joules_per_correct),
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

/** Why a run has no single accuracy to list: infer grades nothing; a code run with several solvers has one per solver. */
function noAccuracy(r: HistoryRun): string {
  const kind = historyKind(r.kind);
  if (kind === 'infer') return 'n/a (infer: not graded)';
  if (kind === 'code') return 'n/a (per solver: joulebench report #' + r.id + ')';
  return 'n/a';
}

/** A digest short enough for a table column: 8 hex digits, no algorithm prefix (`--json` has it whole). */
function shortDigest(digest: string): string {
  return digest.replace(/^sha256:/, '').slice(0, 8);
}
