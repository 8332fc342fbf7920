import { Command } from 'commander';
import type { ReportContext } from '../../core/aggregate.js';
import type { IdleCalibration, SuiteWindow } from '../../core/energy.js';
import type { ResultsHeader } from '../../core/types.js';
import { prettyJson } from '../../core/canonical.js';
import { JoulebenchError } from '../../core/errors.js';
import { loadConfig } from '../../config/load.js';
import { judgeResultsFile, readResultsForSuite } from '../../judge/results-file.js';
import { readResultsFile } from '../../runner/results-stream.js';
import { judgePairwise } from '../../judge/score.js';
import { pairwiseBlock } from '../../judge/summary.js';
import { renderReportTable } from '../../report/table.js';
import { hasMtBench, promptsText, renderLeaderboard } from '../../report/mt-bench-table.js';
import { rebuildReport } from '../../report/rebuild.js';
import { readJsonIfExists } from '../../report/inputs.js';
import { sortRows, summariseJudgments } from '../../judge/fastchat-judgments.js';
import type { CliIO } from '../io.js';
import { checkOutputPath, writeOutputFile } from '../output-file.js';
import { addJudgeFlags } from '../judge-flags.js';
import { createJudgeFromConfig, type JudgeFlags } from '../../session/judge-setup.js';
import { buildSuite } from '../../session/setup.js';
import { meterOptionsFrom } from '../meter-flags.js';
import { isBundledSuite } from '../../suites/loader.js';

interface RescoreFlags extends JudgeFlags {
  judge?: string;
  judgments?: string;
  suite?: string;
  data?: string;
  references?: string;
  against?: string;
  out?: string;
  inPlace?: boolean;
  quiet?: boolean;
}

/** Where rescore writes the judged results: `X.rescored.results.jsonl` beside `X.results.jsonl`, or over it with `--in-place`. */
function rescoredPath(path: string, inPlace: boolean | undefined): string {
  return inPlace ? path : path.replace(/(\.results)?\.jsonl$/i, '') + '.rescored.results.jsonl';
}

/** `joulebench rescore RESULTS --judge CONFIG`: judges a finished run's judged cases (cached judgements reused), or with `--against` compares two runs. */
export function rescoreCommand(io: CliIO): Command {
  const cmd = new Command('rescore')
    .description("score a results file with an LLM judge (MT-Bench [[rating]]; cached judgements are not asked again) into a new results file (--in-place: over it), or with --judgments summarise FastChat's published judgments per model")
    .argument('[results]', 'results JSONL of a finished run (with --judgments: a judged run to place beside the published models)')
    .option('--judge <config>', 'YAML config with a judge: block (kind, endpoint, model, prices, mode, pass, cache, prompts); required unless --judgments')
    .option('--judgments <file>', "FastChat's published single-answer judgments (model_judgment/gpt-4_single.jsonl): the per-model turn 1, turn 2 and average table, as show_result.py prints it; no judge is asked")
    .option('-s, --suite <name|file>', "the suite the run asked (default: the results header's suite name)")
    .option('--data <path>', 'MT-Bench question.jsonl (--suite mt-bench) or MMLU data')
    .option('--references <file>', "MT-Bench reference answers in FastChat's form")
    .option('--against <results>', 'pairwise mode: the other run to compare with (both orders are asked)')
    .option('-o, --out <file>', 'write the report JSON here (default: stdout, with the table on stderr)')
    .option('--in-place', 'write the judged results over the input file (default: a new file beside it, X.rescored.results.jsonl)')
    .option('-q, --quiet', 'no table');
  return addJudgeFlags(cmd).action(async (path: string | undefined, flags: RescoreFlags) => {
    if (flags.out) checkOutputPath(flags.out, '--out');
    if (flags.judgments !== undefined) return publishedTable(io, flags.judgments, path, flags);
    if (flags.judge === undefined) throw new JoulebenchError('E_USAGE', "rescore needs --judge CONFIG (or --judgments FILE to read FastChat's published judgments)");
    if (path === undefined) throw new JoulebenchError('E_USAGE', 'rescore needs a results file to judge');
    const dest = rescoredPath(path, flags.inPlace);
    if (flags.against === undefined) checkOutputPath(dest, flags.inPlace ? '--in-place' : 'the rescored results file');
    const cfg = loadConfig(flags.judge);
    const block = cfg.config.judge;
    if (!block) throw new JoulebenchError('E_CONFIG', `${cfg.path}: judge: is required for rescore (kind, model, …)`);
    // Its header names the suite and its last lines hold the run's energy basis; the judge reuses these results.
    const file = readResultsFile(path);
    const headerSuite = file.header?.suite;
    if (!headerSuite) throw new JoulebenchError('E_RESULTS', `${path}: results file has no header line`);
    if (flags.suite === undefined && !isBundledSuite(headerSuite) && headerSuite !== 'mt-bench') {
      throw new JoulebenchError('E_USAGE', `${path} was written for suite "${headerSuite}": give its file with --suite FILE (the judge needs the questions)`);
    }
    const suiteName = flags.suite ?? headerSuite;
    const suite = buildSuite(
      { suite: suiteName, ...(flags.data ? { data: flags.data } : {}), ...(flags.references ? { references: flags.references } : {}) },
      null,
    );
    if ((block.mode === 'pairwise') !== (flags.against !== undefined)) {
      throw new JoulebenchError('E_USAGE', block.mode === 'pairwise' ? `${cfg.path}: judge.mode pairwise needs --against OTHER.results.jsonl` : `--against needs judge.mode: pairwise in ${cfg.path}`);
    }
    const setup = await createJudgeFromConfig(block, cfg.path, { ...flags, judgeMeterOptions: meterOptionsFrom({}, process.env) }, process.env);
    let json: string;
    try {
      if (flags.against !== undefined) {
        const a = readResultsForSuite(path, suite, file);
        const b = readResultsForSuite(flags.against, suite);
        const { verdicts, tally } = await judgePairwise({ a: a.results, b: b.results, cases: new Map(suite.cases.map((c) => [c.id, c])), judge: setup.judge });
        const report = { a: { results: path, target: a.header.target }, b: { results: flags.against, target: b.header.target }, ...pairwiseBlock(verdicts, tally, setup.info) };
        json = prettyJson(report);
        if (!flags.quiet) {
          io.err(
            `pairwise · judge ${setup.info.model} · A ${a.header.target} vs B ${b.header.target}: A wins ${report.a_wins}, B wins ${report.b_wins}, ties ${report.ties}` +
              ` (${report.inconsistent} by order disagreement), undecided ${report.undecided}; judge ${setup.judge.requests} request(s) now\n`,
          );
        }
      } else {
        // A finished run's file holds its energy basis and wall time (its run_measures line, read by
        // judgeResultsFile); an older file's energy basis is in the receipt beside it.
        const energy = file.other.some((o) => o.record === 'run_measures') ? undefined : runEnergyFromReceipt(path, file.header);
        const judged = await judgeResultsFile({ path, suite, judge: setup.judge, info: setup.info, read: file, dest, ...(energy ? { energy } : {}) });
        json = prettyJson(judged.report);
        if (!flags.quiet) io.err(renderReportTable(judged.report) + `judge requests now: ${setup.judge.requests}\nresults ${dest} (${flags.inPlace ? 'rewritten' : 'written'} with the scores)\n`);
      }
    } finally {
      await setup.close();
    }
    if (flags.out) writeOutputFile(flags.out, json, 'output');
    else io.out(json);
  });
}

/** `rescore --judgments FILE [RESULTS]`: show_result.py's per-model table of published judgments, with a judged run of ours beside them. */
function publishedTable(io: CliIO, judgments: string, results: string | undefined, flags: RescoreFlags): void {
  if (flags.judge !== undefined || flags.against !== undefined) throw new JoulebenchError('E_USAGE', '--judgments reads judgments already made: --judge and --against do not apply');
  const { json, text } = leaderboard(judgments, results === undefined ? [] : [results]);
  if (!flags.quiet) io.err(text);
  if (flags.out) writeOutputFile(flags.out, json, 'output');
  else io.out(json);
}

/** FastChat's per-model table from published judgments, with judged runs of ours placed beside it: the JSON and the table. */
export function leaderboard(judgments: string, results: readonly string[]): { json: string; text: string } {
  const summary = summariseJudgments(judgments);
  const notes: string[] = [];
  for (const path of results) {
    const { header, report } = rebuildReport(path);
    if (!hasMtBench(report) || !report.mt_bench_turns) throw new JoulebenchError('E_RESULTS', `${path}: not a judged run (rescore it with --judge first)`);
    const t = report.mt_bench_turns;
    summary.models = sortRows([...summary.models, { model: header.target, source: path, turn_1: t.turn_1.score, turn_2: t.turn_2.score, average: t.average.score, ratings: t.average.count }]);
    notes.push(`${header.target}: judge ${report.judge.model}, ${promptsText(report.judge)}; the published rows: judge ${summary.judges.join(', ')}`);
  }
  const dropped = summary.dropped > 0 ? `${summary.dropped} row(s) with score -1 (no verdict) left out, as show_result.py does\n` : '';
  return { json: prettyJson(summary), text: renderLeaderboard(summary.models) + dropped + notes.map((n) => n + '\n').join('') };
}

/** The run's idle calibration and suite window from the receipt beside an older results file; none when absent or for another config. */
function runEnergyFromReceipt(resultsPath: string, header: ResultsHeader | null): ReportContext['energy'] | undefined {
  const rc = readJsonIfExists(resultsPath.replace(/\.results\.jsonl$/i, '.receipt.json'), resultsPath) as {
    config_digest?: unknown;
    energy?: { idle?: IdleCalibration; suite_window?: SuiteWindow | null; gross_from?: string };
  } | null;
  if (!rc?.energy?.idle || rc.config_digest !== header?.config_digest) return undefined;
  const w = rc.energy.suite_window;
  return {
    idle: rc.energy.idle,
    suite: rc.energy.gross_from === 'suite-window' && w ? { joules: w.joules, source: w.source, by_domain: w.by_domain, window_ms: w.window_ms, below_floor: w.below_floor } : null,
  };
}
