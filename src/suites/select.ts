import { JoulebenchError } from '../core/errors.js';
import type { Suite } from '../core/types.js';

/** `--filter REGEX` and `--limit N`: which cases (or tasks) of a suite to run. */
export interface Selection {
  /** A JavaScript regular expression, matched against the case id, each tag and the dataset. */
  filter?: string;
  /** Keep at most this many, in suite order, after the filter. */
  limit?: number;
}

/** The filter as a RegExp; a pattern that does not compile is the user's mistake (exit 2). */
export function compileFilter(pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch (e) {
    throw new JoulebenchError('E_USAGE', `--filter ${JSON.stringify(pattern)}: not a valid regular expression (${(e as Error).message})`);
  }
}

/** Items whose keys match the filter (any key), then the first `limit`. Pure. */
export function selectItems<T>(items: readonly T[], sel: Selection, keys: (item: T) => readonly string[]): T[] {
  const re = sel.filter !== undefined ? compileFilter(sel.filter) : null;
  const kept = re ? items.filter((item) => keys(item).some((k) => re.test(k))) : [...items];
  return sel.limit !== undefined ? kept.slice(0, sel.limit) : kept;
}

/** The selection as text for a suite version: `filter=/x/,limit=5`; empty when nothing is selected. */
export function describeSelection(sel: Selection): string {
  return [sel.filter !== undefined ? `filter=/${sel.filter}/` : null, sel.limit !== undefined ? `limit=${sel.limit}` : null].filter(Boolean).join(',');
}

/** A suite cut down to the selected cases; the selection enters the version (so the digest), and MMLU's own digest is dropped. */
export function selectCases(suite: Suite, sel: Selection): Suite {
  const what = describeSelection(sel);
  if (what === '') return suite;
  const cases = selectItems(suite.cases, sel, (c) => [c.id, c.dataset, ...(c.tags ?? [])]);
  if (cases.length === 0) throw new JoulebenchError('E_USAGE', `--filter/--limit (${what}) selected no case of suite ${suite.name} (${suite.cases.length} cases)`);
  const { digest: _digest, ...rest } = suite;
  return { ...rest, version: `${suite.version}+${what}`, cases };
}
