import { resolve } from 'node:path';
import type { ResultsSink } from '../runner/results-file.js';
import { isBundledSuite } from '../suites/loader.js';

/**
 * Where a `--suite` can be read again later (`ResultsHeader.suite_source`): a bundled suite by name, a
 * suite file by its absolute path. `undefined` for mmlu and mt-bench, whose cases come from `--data`
 * and a config (the report does not rebuild them).
 */
export function suiteSourceOf(suite: string, cwd: string = process.cwd()): string | undefined {
  if (suite === 'mmlu' || suite === 'mt-bench') return undefined;
  return isBundledSuite(suite) ? suite : resolve(cwd, suite);
}

/** The sink with `suite_source` added to the header it is given (one line per file, never per case). */
export function withSuiteSource(inner: ResultsSink, source: string | undefined): ResultsSink {
  if (source === undefined) return inner;
  return {
    header: (h) => inner.header({ ...h, suite_source: source }),
    write: (r, now_ms) => inner.write(r, now_ms),
    note: (line) => inner.note?.(line),
    flush: () => inner.flush?.(),
    close: () => inner.close(),
  };
}
