import type { ParsedReport, TestFormat } from './types.js';
import { parseJUnit } from './junit.js';
import { parseTap } from './tap.js';

/** The variable every test command gets: where its report goes (outside the tree under test). */
export const REPORT_ENV = 'JOULEBENCH_TEST_REPORT';

/** `env` plus what makes a test command report to `path`: NODE_OPTIONS for node:test, PYTEST_ADDOPTS (xunit1: node ids) for pytest. */
export function withReportEnv(format: TestFormat, path: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env, [REPORT_ENV]: path };
  if (format === 'node-test') {
    const flags = `--test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination=${JSON.stringify(path)}`;
    out.NODE_OPTIONS = env.NODE_OPTIONS ? `${env.NODE_OPTIONS} ${flags}` : flags;
  } else if (format === 'pytest-junit') {
    const flags = `--junitxml=${pyQuote(path)} -o junit_family=xunit1`;
    out.PYTEST_ADDOPTS = env.PYTEST_ADDOPTS ? `${env.PYTEST_ADDOPTS} ${flags}` : flags;
  }
  return out;
}

/** Reads a report in its format; `null` text (no file written) is a report that is missing. */
export function parseReport(format: TestFormat, text: string | null): ParsedReport {
  if (text === null) return { ok: false, error: 'the test command wrote no report (the runner did not start, or the process ended before it reported)' };
  if (format === 'tap') return parseTap(text);
  return parseJUnit(text, format === 'pytest-junit' ? 'pytest' : 'node-test');
}

/** The default format for a test command: pytest's for pytest, node:test's otherwise. */
export function defaultTestFormat(testCmd: string): TestFormat {
  return /(^|[\s/])(py\.test|pytest)(\s|$)|python[\d.]*\s+-m\s+pytest/.test(testCmd) ? 'pytest-junit' : 'node-test';
}

/** Quotes a value for PYTEST_ADDOPTS, which pytest splits with shlex. */
function pyQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'"'"'`)}'`;
}
