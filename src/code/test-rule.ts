import { round } from '../core/stats.js';
import type { TestRun } from './oracle.js';
import { shellQuote } from './solvers/command.js';
import type { CodeTask } from './task.js';

/** One run of a test command, wherever it ran (the local sandbox or a container). */
export interface CommandRun {
  exit_code: number | null;
  timed_out: boolean;
  wall_ms: number;
  /** The run passed the memory limit and was stopped. */
  memory_exceeded?: boolean;
}

/** `test_cmd` for one named test: `{test}` replaced by the quoted name, or the name appended. */
export function testCommandFor(task: CodeTask, name: string): string {
  return task.test_cmd.includes('{test}') ? task.test_cmd.replaceAll('{test}', shellQuote(name)) : `${task.test_cmd} ${shellQuote(name)}`;
}

/**
 * The task's tests through `run`, one rule for every runner. Without fail_to_pass / pass_to_pass the
 * whole `test_cmd` runs once and its exit code is the answer. With them (SWE-bench), each named test is
 * one run of `test_cmd`; its status is `pass` (exit 0), `fail` or `timeout`, and the whole passes
 * (exit_code 0) iff every one does — so "resolved" is SWE-bench's rule: every FAIL_TO_PASS test passes
 * and no PASS_TO_PASS test breaks.
 */
export async function runTaskTests(task: CodeTask, run: (cmd: string) => Promise<CommandRun>): Promise<TestRun> {
  const named = [...task.fail_to_pass, ...task.pass_to_pass];
  if (named.length === 0) {
    const r = await run(task.test_cmd);
    return { exit_code: r.exit_code, timed_out: r.timed_out, wall_ms: round(r.wall_ms, 3), ...(r.memory_exceeded ? { memory_exceeded: true } : {}) };
  }
  const tests: Record<string, 'pass' | 'fail' | 'timeout'> = {};
  let wall = 0;
  let exceededAny = false;
  let timedOut = false;
  for (const name of [...new Set(named)]) {
    const r = await run(testCommandFor(task, name));
    wall += r.wall_ms;
    exceededAny ||= r.memory_exceeded === true;
    timedOut ||= r.timed_out;
    tests[name] = r.timed_out ? 'timeout' : r.exit_code === 0 ? 'pass' : 'fail';
  }
  const allPass = Object.values(tests).every((v) => v === 'pass');
  return { exit_code: allPass ? 0 : 1, timed_out: timedOut, wall_ms: round(wall, 3), tests, ...(exceededAny ? { memory_exceeded: true } : {}) };
}
