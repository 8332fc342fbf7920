import { dirname, join } from 'node:path';
import { Command, Option } from 'commander';
import { prettyJson } from '../../core/canonical.js';
import { JoulebenchError } from '../../core/errors.js';
import { renderSweepTable } from '../../report/sweep-table.js';
import { compareSweep, loadSweep } from '../../sweep/load.js';
import { resumeSweep, runSweep, type SweepHooks, type SweepOptions } from '../../sweep/run.js';
import type { CliIO } from '../io.js';
import { writeOutputFile } from '../output-file.js';
import { intAtLeast, probability, UNIT_LIMIT_HELP, unitLimit } from '../options.js';
import { DEFAULT_BOOTSTRAP_MAX_UNITS } from '../../stats/bootstrap.js';
import { meterOptionsFrom } from '../meter-flags.js';
import { createProgress, type Progress } from '../progress.js';

interface SweepFlags {
  outDir?: string;
  resume?: string;
  parallelArms: number;
  queue?: string;
  queuePasswordRef?: string;
  bootstrap: number;
  bootstrapMaxUnits?: number | 'inf';
  alpha: number;
  pAdjust: 'holm' | 'none';
  history: boolean;
  idle: boolean;
  /** False with `--no-store-prompts`. */
  storePrompts: boolean;
  quiet?: boolean;
}

export function sweepCommand(io: CliIO): Command {
  return new Command('sweep')
    .description('run every arm of a plan (arms × suites, each an ordinary run) and compare them with intervals, a frontier and significance against a baseline')
    .argument('[plan]', 'the plan (YAML): name, suites, arms (as in run --config, each with a name), optional matrix and baseline')
    .option('--out-dir <dir>', 'where every run and the comparison go (default ./.joulebench/sweeps/<name>-<UTC>/)')
    .option('--resume <dir>', 'continue a killed sweep: finished runs are kept, an interrupted one resumes from its results file')
    .option('--parallel-arms <n>', 'arms at once; only for arms on different machines or endpoints (their runs are marked shared)', intAtLeast(1), 1)
    .option('--bootstrap <n>', 'bootstrap resamples for intervals (0: off)', intAtLeast(0), 2000)
    .option('--bootstrap-max-units <n>', `every run's and the comparison's intervals: ${UNIT_LIMIT_HELP} (default: ${DEFAULT_BOOTSTRAP_MAX_UNITS})`, unitLimit)
    .option('--alpha <a>', 'significance level against the baseline', probability, 0.05)
    .addOption(new Option('--p-adjust <method>', "multiple comparisons against the baseline: holm (Holm-adjusted McNemar p-values; J/correct and p95 judged at α/m) or none (each at α)").choices(['holm', 'none']).default('holm'))
    .option('--queue <redis://host:port/db>', 'run the arms on `joulebench worker` machines through this queue (BullMQ on Redis); the files land here as for a local sweep')
    .option('--queue-password-ref <env:NAME>', 'read the queue\'s Redis password from this environment variable')
    .option('--no-history', 'do not record the runs in the history database')
    .option('--no-idle', 'skip idle calibration before each run')
    .option('--no-store-prompts', "keep no prompt in the runs' results files (private data)")
    .option('-q, --quiet', 'no progress lines and no table')
    .action(async (plan: string | undefined, flags: SweepFlags) => {
      if (!plan && !flags.resume) throw new JoulebenchError('E_USAGE', 'sweep needs a plan file, or --resume DIR');
      if (flags.resume && flags.outDir) throw new JoulebenchError('E_USAGE', '--resume DIR continues in DIR: drop --out-dir');
      // Ctrl-C or a polite kill: the running session writes what is buffered, then we stop; --resume continues.
      const aborter = new AbortController();
      let where: string | null = flags.resume ?? flags.outDir ?? null;
      const onSignal = (signal: NodeJS.Signals) => {
        aborter.abort();
        io.err(`\njoulebench: sweep stopped by ${signal}; continue it with: joulebench sweep --resume ${where ?? '<the sweep folder>'}\n`);
        process.exit(signal === 'SIGINT' ? 130 : 143);
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      let lastProgress = 0;
      // Inside an arm, run's progress bar (one arm at a time: parallel arms would draw over each other).
      let bar: Progress | null = null;
      const stopBar = (): void => {
        bar?.stop();
        bar = null;
      };
      const hooks: SweepHooks = {
        signal: aborter.signal,
        onRun: (e, event) => {
          // <dir>/<arm>/<suite>.json: the sweep folder, for the resume hint.
          where ??= dirname(dirname(e.report));
          stopBar();
          // A failure is printed once, here, as it happens (quiet or not); the table then only names it.
          if (event === 'failed') io.err(`sweep: failed ${e.arm} × ${e.suite}: ${e.error ?? 'unknown error'}\n`);
          else if (!flags.quiet && event !== 'done') io.err(`sweep: ${event === 'skipped' ? 'finished before' : event} ${e.arm} × ${e.suite}\n`);
        },
        onStart: ({ total_cases }) => {
          if (!flags.quiet && flags.parallelArms === 1) bar = createProgress(io, total_cases);
        },
        onResult: (_r, p) => bar?.update(p.done),
        onWarning: (w) => io.err(`joulebench: warning: ${w}\n`),
        onQueueProgress: (p) => {
          // At most a line a second: runs done, cases on disk, cases per worker.
          const now = Date.now();
          if (flags.quiet || (now - lastProgress < 1000 && p.runs_done < p.runs_total)) return;
          lastProgress = now;
          const workers = Object.entries(p.per_worker).map(([w, n]) => `${w} ${n}`).join(', ');
          io.err(`sweep: ${p.runs_done}/${p.runs_total} runs done, ${p.cases_done} cases${workers ? ` (${workers})` : ''}\n`);
        },
      };
      const opts: SweepOptions = {
        parallel_arms: flags.parallelArms,
        // The same environment run reads (JOULEBENCH_POWERCAP_ROOT, JOULEBENCH_ACTIVE_WATTS…); an arm's meter_options win.
        meter_options: meterOptionsFrom({}, process.env),
        bootstrap: flags.bootstrap,
        ...(flags.bootstrapMaxUnits !== undefined ? { bootstrap_max_units: flags.bootstrapMaxUnits } : {}),
        ...(flags.history ? {} : { history: false as const }),
        ...(flags.idle ? {} : { idle_ms: 0 }),
        ...(flags.storePrompts === false ? { store_prompts: false } : {}),
        argv: process.argv.slice(2),
        comparison: {
          alpha: flags.alpha,
          resamples: flags.bootstrap,
          ...(flags.bootstrapMaxUnits !== undefined ? { max_units: flags.bootstrapMaxUnits } : {}),
          ...(flags.pAdjust !== 'holm' ? { p_adjust: flags.pAdjust } : {}),
        },
        ...(flags.queue ? { queue: (await import('../../queue/connection.js')).parseQueueUrl(flags.queue, flags.queuePasswordRef, process.env) } : {}),
      };
      let dir: string;
      try {
        ({ dir } = flags.resume
          ? await resumeSweep(flags.resume, { ...opts, ...(plan ? { plan_path: plan } : {}) }, hooks)
          : await runSweep(plan!, { ...opts, ...(flags.outDir ? { out_dir: flags.outDir } : {}) }, hooks));
      } finally {
        stopBar();
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
      const loaded = loadSweep(dir);
      // With the settings just recorded in the state, as `report DIR` recomputes it.
      const comparison = compareSweep(loaded);
      const path = join(dir, 'comparison.json');
      writeOutputFile(path, prettyJson(comparison), 'output');
      io.out(prettyJson(comparison));
      if (!flags.quiet) io.err(renderSweepTable(comparison, { failuresShown: true }) + `sweep ${dir}\ncomparison ${path}\n`);
      if (loaded.missing.length > 0) throw new JoulebenchError('E_RUN', `${loaded.missing.length} of ${loaded.state.runs.length} runs did not finish (see ${join(dir, 'sweep.json')})`);
    });
}
