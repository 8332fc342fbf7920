import { round } from '../core/stats.js';
import type { TestRun } from './oracle.js';
import { shellQuote } from './solvers/command.js';
import type { CodeTask } from './task.js';
import type { GradedRun, NamedStatus } from './test-report/rule.js';
import { parseReport } from './test-report/setup.js';
import type { ReportedTest, TestOutcome } from './test-report/types.js';

/** The last part of a test run's output kept as evidence, characters. */
const OUTPUT_TAIL_CHARS = 4096;

/** One run of a test command, wherever it ran (the local sandbox or a container). */
export interface CommandRun extends Pick<GradedRun, 'exit_code' | 'timed_out' | 'memory_exceeded'> {
  wall_ms: number;
  /** The report file's text as the run left it; `null` when it wrote none. */
  report: string | null;
  /** The end of its output (stdout, then stderr), for diagnosis. */
  output_tail: string | null;
  /** The output names a file inside the tree under test (an error loading the code, not the runner). */
  code_in_output?: boolean;
}

/** Runs one test command with its report going to a place of the runner's choosing (given in `env`). */
export type TestCommand = (cmd: string, n: number) => Promise<CommandRun>;

/** A finished test command as the rule reads it: the end of `output` kept, and whether it names a file under `tree`. */
export function commandRun(run: Omit<CommandRun, 'code_in_output' | 'output_tail'>, output: string, tree: string): CommandRun {
  return { ...run, code_in_output: output.includes(`${tree}/`), output_tail: output.slice(-OUTPUT_TAIL_CHARS) };
}

/** `test_cmd` for some named tests: `{test}` replaced by the quoted names, or the names appended. */
function testCommandFor(task: CodeTask, names: readonly string[]): string {
  const quoted = names.map(shellQuote).join(' ');
  return task.test_cmd.includes('{test}') ? task.test_cmd.replaceAll('{test}', quoted) : `${task.test_cmd} ${quoted}`;
}

/**
 * The task's tests through `run`, every outcome read from the report, never from an exit status. Without
 * named tests, or for pytest, one run (each name's status is its test's); otherwise one run per name (a
 * test file for node:test), which passes iff its run reports at least one test and none fails.
 */
export async function runTaskTests(task: CodeTask, run: TestCommand): Promise<TestRun> {
  const named = [...new Set([...task.fail_to_pass, ...task.pass_to_pass])];
  const oneRun = named.length === 0 || task.test_format === 'pytest-junit';
  // Each run and the names it answers for; a run per name prefixes its reported tests and its report error with the name.
  const runs = oneRun
    ? [{ cmd: named.length === 0 ? task.test_cmd : testCommandFor(task, named), names: named, prefix: '' }]
    : named.map((name) => ({ cmd: testCommandFor(task, [name]), names: [name], prefix: name }));
  const tests: Record<string, NamedStatus> = {};
  const reported: Record<string, TestOutcome> = {};
  const done: CommandRun[] = [];
  let reportError: string | null = null;
  let failedTail: string | null | undefined;
  for (const [i, { cmd, names, prefix }] of runs.entries()) {
    const r = await run(cmd, i);
    done.push(r);
    const parsed = parseReport(task.test_format, r.report);
    if (!parsed.ok) reportError ??= prefix ? `${prefix}: ${parsed.error}` : parsed.error;
    const mine = parsed.ok ? parsed.tests : [];
    for (const [id, o] of Object.entries(outcomes(mine))) reported[prefix ? `${prefix} > ${id}` : id] = o;
    for (const name of names) {
      const own = oneRun ? mine.filter((t) => t.id === name || t.aliases?.includes(name)) : mine;
      tests[name] = r.timed_out ? 'timeout' : statusOf(own);
    }
    // The evidence kept is the first run that did not pass (else the last).
    if (failedTail === undefined && names.some((n) => tests[n] !== 'pass')) failedTail = r.output_tail;
  }
  // The exit status is the first run's that is not 0 (`null`: killed).
  const notZero = done.find((r) => r.exit_code !== 0);
  const wall_ms = round(done.reduce((a, r) => a + r.wall_ms, 0), 3);
  const head = { exit_code: notZero ? notZero.exit_code : 0, timed_out: done.some((r) => r.timed_out), wall_ms };
  const memory = done.some((r) => r.memory_exceeded === true) ? { memory_exceeded: true } : {};
  const started = done.some((r) => r.report !== null || r.code_in_output === true);
  const graded = { reported, report_error: Object.keys(reported).length === 0 ? reportError : null };
  const output_tail = failedTail !== undefined ? failedTail : (done[done.length - 1]?.output_tail ?? null);
  // Each shape keeps the key order its results files have always had.
  if (oneRun) return { ...head, output_tail, ...memory, ...(named.length > 0 ? { tests } : {}), ...graded, runner_started: started };
  return { ...head, tests, ...graded, output_tail, runner_started: started, ...memory };
}

/** One name's status from the tests its report gave it: none → missing; any failure → fail; skips alone → skipped. */
function statusOf(tests: readonly ReportedTest[]): NamedStatus {
  if (tests.length === 0) return 'missing';
  if (tests.some((t) => t.outcome === 'failed')) return 'fail';
  if (tests.some((t) => t.outcome === 'passed')) return 'pass';
  return 'skipped';
}

function outcomes(tests: readonly ReportedTest[]): Record<string, TestOutcome> {
  const out: Record<string, TestOutcome> = {};
  const seen = new Map<string, number>();
  for (const t of tests) {
    // Two tests of one name (allowed by node:test) are both counted: the second is `name #2`.
    const n = (seen.get(t.id) ?? 0) + 1;
    seen.set(t.id, n);
    out[n === 1 ? t.id : `${t.id} #${n}`] = t.outcome;
  }
  return out;
}
