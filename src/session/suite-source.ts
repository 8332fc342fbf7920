import { resolve } from 'node:path';
import type { ResultsHeader } from '../core/types.js';
import { isBundledSuite } from '../suites/loader.js';

/** The header fields that say where a suite can be read again. */
export type SuiteSourceFields = Pick<ResultsHeader, 'suite_source' | 'suite_data' | 'suite_references'>;

/**
 * Where a `--suite` can be read again later (`ResultsHeader.suite_source`): a bundled suite by name, a
 * suite file by its absolute path, MT-Bench by its question (and reference) files. None for mmlu: its
 * digest covers ids and version, not the question text, so a prompt read back could not be checked.
 */
export function suiteSourceOf(spec: { suite: string; data?: string; references?: string; load?: { dataset?: unknown } }, cwd: string = process.cwd()): SuiteSourceFields {
  if (spec.load?.dataset) return {}; // generated from the header's load settings
  if (spec.suite === 'mmlu') return {};
  if (spec.suite === 'mt-bench') {
    if (spec.data === undefined) return {};
    return { suite_source: 'mt-bench', suite_data: resolve(cwd, spec.data), ...(spec.references !== undefined ? { suite_references: resolve(cwd, spec.references) } : {}) };
  }
  return { suite_source: isBundledSuite(spec.suite) ? spec.suite : resolve(cwd, spec.suite) };
}
