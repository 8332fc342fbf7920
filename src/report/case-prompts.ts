import { existsSync } from 'node:fs';
import type { Case, CaseResult, ChatMessage, ResultsHeader, Suite } from '../core/types.js';
import { suiteDigest } from '../suites/digest.js';
import { isBundledSuite, loadSuite, loadSuiteFile } from '../suites/loader.js';
import { loadMtBench } from '../suites/mt-bench.js';
import { selectItems, type Selection } from '../suites/select.js';
import { isJsonlSuitePath, streamJsonlSuite } from '../suites/jsonl-stream.js';
import { promptOf } from '../suites/prompt.js';

/** A case's prompt as the target was sent it (a string, or a conversation's messages), or why it cannot be shown. */
type CasePrompt = { ok: true; prompt: string | ChatMessage[]; source: string } | { ok: false; reason: string };

/** A case line's prompt: its own, else read back through `lookup`; a conversation is its last request's messages. */
export function casePrompt(header: ResultsHeader | null | undefined, line: CaseResult, lookup: PromptLookup | null): CasePrompt {
  if (line.prompt !== undefined) return { ok: true, prompt: line.prompt, source: 'results file' };
  if (header?.prompts === 'none') return { ok: false, reason: 'prompts not stored: the run used --no-store-prompts' };
  if (header?.prompts === 'text') return { ok: false, reason: 'prompt not stored: this case line has none, though the run kept prompts' };
  if ((line.meta as { load?: { turn?: unknown } } | undefined)?.load?.turn !== undefined) {
    return { ok: false, reason: "prompt not stored: a load run's conversation turn is not read back from the suite" };
  }
  if (lookup === null) return { ok: false, reason: 'prompts not stored in the results file, and the suite was not read back' };
  if (!lookup.ok) return { ok: false, reason: lookup.reason };
  const turns = lookup.turnsOf(line.index);
  if (turns === null) return { ok: false, reason: `case ${line.index} is not in ${lookup.source}` };
  if (line.turns === undefined) return { ok: true, prompt: promptOf({ turns }), source: lookup.source };
  const asked = line.turns.length;
  const messages: ChatMessage[] = [];
  for (let k = 0; k < asked && k < turns.length; k++) {
    if (k > 0) messages.push({ role: 'assistant', content: line.turns[k - 1]!.response ?? '' });
    messages.push({ role: 'user', content: turns[k]! });
  }
  return { ok: true, prompt: messages, source: lookup.source };
}

/** Each case's prompt, read back from the header's suite only while it hashes to the run's digest. */
type PromptLookup =
  | { ok: true; source: string; turnsOf: (index: number) => string[] | null }
  | { ok: false; reason: string };

export function resolvePrompts(header: ResultsHeader | null | undefined, results: readonly CaseResult[]): PromptLookup {
  if (!header) return { ok: false, reason: 'no results header was read, so the suite is unknown' };
  const source = header.suite_source;
  if (source === undefined || source === '') {
    if (header.suite === 'mmlu' && !header.suite_version.includes('+')) {
      return { ok: false, reason: "MMLU's suite digest covers the question ids and version, not the question text, so a prompt read back could not be checked against the run" };
    }
    return { ok: false, reason: `the results file does not say where suite "${header.suite}" was read from (written before joulebench recorded it, or an mmlu run)` };
  }
  let suite: Suite;
  if (isBundledSuite(source)) {
    suite = loadSuite(source);
  } else if (source === 'mt-bench') {
    const files = [header.suite_data, header.suite_references].filter((f): f is string => f !== undefined);
    if (header.suite_data === undefined) return { ok: false, reason: 'the results file names MT-Bench but not its question file' };
    const gone = files.find((f) => !existsSync(f));
    if (gone) return { ok: false, reason: `suite file not found: ${gone}` };
    try {
      suite = loadMtBench(header.suite_data, header.suite_references !== undefined ? { references: header.suite_references } : {});
    } catch {
      return { ok: false, reason: `suite does not load now: ${files.join(' or ')} (joulebench run --suite mt-bench --data … says why)` };
    }
  } else {
    if (!existsSync(source)) return { ok: false, reason: `suite file not found: ${source}` };
    if (isJsonlSuitePath(source)) return streamedPrompts(source, header, results);
    try {
      suite = loadSuiteFile(source);
    } catch {
      // Not the loader's message: it can quote the file, and the page must not carry pieces of a local file.
      return { ok: false, reason: `suite does not load now: ${source} (joulebench run -s ${source} says why)` };
    }
  }
  const matched = casesAsRun(suite, header);
  if (!matched) {
    const now = suiteDigest({ ...suite, version: header.suite_version });
    const where = isBundledSuite(source) ? 'bundled suite' : source === 'mt-bench' ? (header.suite_data ?? source) : source;
    return { ok: false, reason: digestChanged(header.suite_digest, where, now) };
  }
  const shown = isBundledSuite(source) ? `bundled suite "${source}"` : source === 'mt-bench' ? `MT-Bench questions ${header.suite_data ?? ''}` : source;
  return checkedLookup(shown, results, (i) => matched[i]);
}

/** {@link resolvePrompts} for a JSONL suite: streamed and digested as `run` did, keeping only the cases `results` name. */
function streamedPrompts(source: string, header: ResultsHeader, results: readonly CaseResult[]): PromptLookup {
  const run = header.suite_version;
  const plus = run.indexOf('+');
  const sel = plus >= 0 ? parseSelection(run.slice(plus + 1)) : null;
  const label = plus >= 0 ? run.slice(0, plus) : run;
  const unreadable: PromptLookup = { ok: false, reason: `suite does not load now: ${source} (joulebench run -s ${source} says why)` };
  // A JSONL suite's own version is "1"; the run's may add a retry label and its selection.
  const labelled = label === '1' || label.startsWith('1/retry-');
  const wanted = new Set(results.map((r) => r.index));
  const byIndex = new Map<number, Case>();
  const stream = (selection: Selection | null, version: string, keep?: (i: number, c: Case) => void) =>
    streamJsonlSuite(source, { ...(selection ? { selection } : {}), relabel: () => version, ...(keep ? { onSelected: keep } : {}) });
  let digest: string | null = null;
  try {
    // One pass checks and digests the file, keeping the cases the results name as it goes.
    if (labelled && (plus < 0 || sel)) digest = stream(sel, label, (i, c) => wanted.has(i) && byIndex.set(i, c)).digest;
  } catch {
    // The loader's message is not repeated: it can quote the file (see resolvePrompts).
    return unreadable;
  }
  if (digest !== header.suite_digest) {
    let now: string;
    try {
      // As resolvePrompts says it: every case of the file now, under the run's version.
      now = stream(null, run).digest;
    } catch {
      return unreadable;
    }
    return { ok: false, reason: digestChanged(header.suite_digest, source, now) };
  }
  return checkedLookup(source, results, (i) => byIndex.get(i));
}

/** The digest pins each case's id to its index: a results line that disagrees is not this run's. */
function checkedLookup(source: string, results: readonly CaseResult[], caseAt: (index: number) => Case | undefined): PromptLookup {
  const bad = results.find((r) => caseAt(r.index)?.id !== r.case_id);
  if (bad) return { ok: false, reason: `case ${bad.index} of the results is "${bad.case_id}", the suite's is "${caseAt(bad.index)?.id ?? '(none)'}"` };
  const turnsOf = (c: Case | undefined): string[] | null => (!c ? null : c.turns?.length ? [...c.turns] : [c.prompt ?? '']);
  return { ok: true, source, turnsOf: (index) => turnsOf(caseAt(index)) };
}

/** Why a suite's prompts are not shown: it hashes differently now (`where` names it). */
export function digestChanged(run: string, where: string, now: string): string {
  const short = (d: string) => d.replace(/^sha256:/, '').slice(0, 12);
  return `suite changed since the run: digest differs (run ${short(run)}, ${where} now ${short(now)})`;
}

/** The cases the run asked, when the suite now hashes to the run's digest (its `/retry-N` and `+filter…` selection reapplied). */
function casesAsRun(suite: Suite, header: ResultsHeader): Case[] | null {
  const run = header.suite_version;
  if (!(run === suite.version || run.startsWith(`${suite.version}/retry-`) || run.startsWith(`${suite.version}+`))) return null;
  const candidates: Case[][] = [suite.cases];
  const plus = run.indexOf('+', suite.version.length);
  const sel = plus >= 0 ? parseSelection(run.slice(plus + 1)) : null;
  if (sel) candidates.push(selectItems(suite.cases, sel, (c) => [c.id, c.dataset, ...(c.tags ?? [])]));
  for (const cases of candidates) {
    // A suite-defined digest (MMLU's ids + version) does not cover the prompts: only the content digest is trusted.
    const { digest: _own, ...rest } = suite;
    if (suiteDigest({ ...rest, version: run, cases }) === header.suite_digest) return cases;
  }
  return null;
}

/** `filter=/x/,limit=5`, `filter=/x/`, `limit=5` (describeSelection's text) back to a selection. */
export function parseSelection(text: string): Selection | null {
  const m = /^(?:filter=\/([\s\S]*)\/)?(?:(?:^|,)limit=(\d+))?$/.exec(text);
  if (!m || (m[1] === undefined && m[2] === undefined)) return null;
  return { ...(m[2] !== undefined ? { limit: Number(m[2]) } : {}), ...(m[1] !== undefined ? { filter: m[1] } : {}) };
}
