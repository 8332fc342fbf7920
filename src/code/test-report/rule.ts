import type { TestOutcome } from './types.js';

// The grading rule, SWE-bench's made per test (docs/coding-agents.md).

/** A named test's status in one run (a FAIL_TO_PASS / PASS_TO_PASS entry). */
export type NamedStatus = 'pass' | 'fail' | 'timeout' | 'skipped' | 'missing';

/** What the rule needs of one run of a task's tests. */
export interface GradedRun {
  exit_code: number | null;
  timed_out: boolean;
  /** The run passed the memory limit and was stopped. */
  memory_exceeded?: boolean;
  /** Per named test (fail_to_pass / pass_to_pass), from the report (`skipped`: only skipped or todo); absent without. */
  tests?: Record<string, NamedStatus>;
  /** Every test the report named, with its outcome (`passed`, `failed`, `skipped`, `todo`). */
  reported?: Record<string, TestOutcome>;
  /** Why the report is missing or unreadable; `null` when it was read. */
  report_error?: string | null;
  /** A run reported, or its output shows the code under test failing to load; false: the environment failed. */
  runner_started?: boolean;
}

/** The named tests of a task. */
interface NamedTests {
  fail_to_pass: readonly string[];
  pass_to_pass: readonly string[];
}

/** Why a baseline cannot count (the datapoint is invalid), or `null` when it is a real failing baseline. */
export function baselineProblem(task: NamedTests & { test_timeout_s: number }, b: GradedRun): string | null {
  if (b.memory_exceeded) return 'the tests passed the memory limit before the solver ran';
  if (b.exit_code === 126 || b.exit_code === 127) {
    // sh's "not executable" / "command not found": the tests never ran, so their failure proves nothing.
    return `test_cmd could not run (exit ${b.exit_code}: ${b.exit_code === 127 ? 'command not found' : 'not executable'})`;
  }
  const reported = Object.values(b.reported ?? {});
  if (reported.length === 0 && b.runner_started === false) {
    return `the test runner did not start before the solver ran${b.report_error ? ` (${b.report_error})` : ''}: the environment failed, not the code under test; see the baseline's output_tail`;
  }
  if (task.fail_to_pass.length > 0) {
    const passing = task.fail_to_pass.filter((t) => b.tests?.[t] === 'pass');
    if (passing.length > 0) return `fail_to_pass test(s) already pass before the solver runs: ${passing.join(', ')}`;
    const broken = task.pass_to_pass.filter((t) => b.tests?.[t] !== 'pass');
    if (broken.length > 0) return `pass_to_pass test(s) do not pass before the solver runs: ${broken.map((t) => `${t} (${b.tests?.[t] ?? 'missing'})`).join(', ')}`;
    return null;
  }
  if (b.timed_out) return `the tests timed out before the solver ran (test_timeout_s ${task.test_timeout_s})`;
  // No test reported while the code under test failed to load: the tests fail, as the task means them to.
  if (reported.length > 0 && !reported.includes('failed')) return 'the tests already pass before the solver runs (the task does not reproduce its bug)';
  return null;
}

/** The verdict on a grading run against its baseline. */
interface GradeVerdict {
  resolved: boolean;
  /** Why not resolved (the first reason), `null` when resolved. */
  reason: string | null;
  /** Tests the baseline ran that the grading run did not report (and a count shortfall). */
  tests_missing: string[];
  /** Tests the baseline ran that the grading run skipped or marked todo. */
  tests_skipped: string[];
}

const RAN: ReadonlySet<TestOutcome> = new Set(['passed', 'failed']);

export function gradeVerdict(task: NamedTests, baseline: GradedRun, grade: GradedRun): GradeVerdict {
  const missing: string[] = [];
  const skipped: string[] = [];
  const reasons: string[] = [];
  const before = baseline.reported ?? {};
  const after = grade.reported ?? {};
  if (grade.report_error) reasons.push(`the test report is missing or unreadable: ${grade.report_error}`);
  if (grade.timed_out) reasons.push('the tests timed out');
  for (const [id, was] of Object.entries(before)) {
    if (!RAN.has(was)) continue;
    const now = after[id];
    if (now === undefined) missing.push(id);
    else if (now === 'skipped' || now === 'todo') skipped.push(id);
  }
  const countBefore = Object.keys(before).length;
  const countAfter = Object.keys(after).length;
  if (countAfter < countBefore && missing.length === 0) missing.push(`(${countAfter} tests reported, ${countBefore} before the solver ran)`);
  const named = [...new Set([...task.fail_to_pass, ...task.pass_to_pass])];
  if (named.length > 0) {
    for (const name of named) {
      const s = grade.tests?.[name] ?? 'missing';
      if (s === 'missing' && !missing.includes(name)) missing.push(name);
      else if (s === 'skipped' && !skipped.includes(name)) skipped.push(name);
      else if (s !== 'pass' && s !== 'missing' && s !== 'skipped') reasons.push(`${task.fail_to_pass.includes(name) ? 'fail_to_pass' : 'pass_to_pass'} test ${name}: ${s}`);
    }
  } else {
    const failed = Object.entries(after).filter(([, o]) => o === 'failed').map(([id]) => id);
    if (failed.length > 0) reasons.push(`${failed.length} test(s) fail: ${failed.slice(0, 5).join(', ')}${failed.length > 5 ? ', …' : ''}`);
    if (!Object.values(after).includes('passed')) reasons.push('no test passed');
  }
  if (missing.length > 0) reasons.push(`test(s) not reported: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`);
  if (skipped.length > 0) reasons.push(`test(s) skipped or todo that ran before: ${skipped.slice(0, 5).join(', ')}${skipped.length > 5 ? ', …' : ''}`);
  return { resolved: reasons.length === 0, reason: reasons[0] ?? null, tests_missing: missing, tests_skipped: skipped };
}
