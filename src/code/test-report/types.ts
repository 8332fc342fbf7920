/** How a task's test command reports each test's outcome (the oracle never grades from an exit status alone). */
export type TestFormat = 'node-test' | 'pytest-junit' | 'tap';
export const TEST_FORMATS: readonly TestFormat[] = ['node-test', 'pytest-junit', 'tap'];

/** One test's outcome as its report gave it. */
export type TestOutcome = 'passed' | 'failed' | 'skipped' | 'todo';

/** One test a report named: `id` is the name the rule matches (and `aliases`, other spellings of it). */
export interface ReportedTest {
  id: string;
  outcome: TestOutcome;
  /** Other names the same test answers to (a pytest node id's `name (class)` form, say). */
  aliases?: string[];
}

/** A parsed report, or why there is none. */
export type ParsedReport = { ok: true; tests: ReportedTest[] } | { ok: false; error: string };
