import { basename, extname } from 'node:path';
import { parseYaml } from '../yaml.js';
import type { z } from 'zod';
import { JoulebenchError } from '../core/errors.js';
import type { Case, Suite } from '../core/types.js';
import mtData from './data/mt.json' with { type: 'json' };
import routerData from './data/router.json' with { type: 'json' };
import router250Data from './data/router-250.json' with { type: 'json' };
import { suiteSchema, type CaseFile, type SuiteFile } from './schema.js';
import { choiceProblem } from '../scorers/choice.js';
import { compileExpected } from '../scorers/regex.js';
import { readTextFile } from '../read-text.js';
import { cut, escapeControls, quote, QUOTE_MAX_CHARS } from '../core/one-line.js';
import { inMemory, streamJsonlSuite } from './jsonl-stream.js';

/** The bundled suites; `all` is mt then router (the 30-case one). */
export const BUNDLED_SUITES = ['mt', 'router', 'router-250', 'all'] as const;
type BundledSuite = (typeof BUNDLED_SUITES)[number];

export function isBundledSuite(name: string): name is BundledSuite {
  return (BUNDLED_SUITES as readonly string[]).includes(name);
}

/** Loads a bundled suite by name, or a user's suite file (.json, .jsonl, .yaml/.yml). */
export function loadSuite(spec: string): Suite {
  if (spec === 'all') return combine('all', [loadSuite('mt'), loadSuite('router')]);
  if (spec === 'mt') return fromData(mtData, 'bundled suite "mt"');
  if (spec === 'router') return fromData(routerData, 'bundled suite "router"');
  if (spec === 'router-250') return fromData(router250Data, 'bundled suite "router-250"');
  return loadSuiteFile(spec);
}

/** Reads and validates a suite file (JSON and YAML in memory, JSONL through its stream); every problem is one line naming the file, case and key. */
export function loadSuiteFile(path: string): Suite {
  const ext = extname(path).toLowerCase();
  // JSONL streams (the one reader of that format), read into memory here.
  if (ext === '.jsonl' || ext === '.ndjson') return inMemory(streamJsonlSuite(path), false);
  const text = readTextFile(path, 'E_SUITE', { where: `suite ${path}`, suffix: ` (bundled suites: ${BUNDLED_SUITES.join(', ')})` });
  const name = basename(path, extname(path));
  let raw: unknown;
  if (ext === '.yaml' || ext === '.yml') {
    try {
      raw = parseYaml(text, { logLevel: 'error' });
    } catch (e) {
      throw new JoulebenchError('E_SUITE', `suite ${path}: not valid YAML (${firstLine((e as Error).message)})`);
    }
  } else if (ext === '.json') {
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new JoulebenchError('E_SUITE', `suite ${path}: not valid JSON (${(e as Error).message})`);
    }
  } else {
    throw new JoulebenchError('E_SUITE', `suite ${path}: unknown file type ${quote(ext)} (use .json, .jsonl or .yaml)`);
  }
  if (Array.isArray(raw)) raw = { name, cases: raw };
  else if (raw !== null && typeof raw === 'object' && !('name' in raw)) raw = { name, ...raw };
  return fromData(raw, `suite ${path}`);
}

function fromData(raw: unknown, where: string): Suite {
  const parsed = suiteSchema.safeParse(raw);
  if (!parsed.success) throw new JoulebenchError('E_SUITE', `${where}: ${describeIssue(parsed.error, raw)}`);
  const file: SuiteFile = parsed.data;
  const seen = new Map<string, number>();
  const cases: Case[] = file.cases.map((c, i) => {
    const prev = seen.get(c.id);
    if (prev !== undefined) throw duplicateId(where, i, c.id, prev);
    seen.set(c.id, i);
    return toCase(c, i, where, file);
  });
  return { name: file.name, version: file.version, scorer: file.scorer, cases, source: where };
}

/** Case `i` repeats the id of case `prev`. */
export function duplicateId(where: string, i: number, id: string, prev: number): JoulebenchError {
  return new JoulebenchError('E_SUITE', `${where}: case ${i} (id ${quote(id)}): id: duplicates case ${prev}`);
}

/** One validated case as the runner takes it (a bad regex or choice refused, naming it), for both suite loaders. */
export function toCase(c: CaseFile, i: number, where: string, file: { name: string; scorer: SuiteFile['scorer'] }): Case {
  if ((c.scorer ?? file.scorer) === 'regex' && c.expected !== null) {
    try {
      compileExpected(c.expected);
    } catch (e) {
      throw new JoulebenchError(
        'E_SUITE',
        `${where}: case ${i} (id ${quote(c.id)}): expected: not a valid regular expression (RE2 syntax, no backreferences or lookaround: ${regexProblem(e)})`,
      );
    }
  }
  if (file.scorer === 'choice' && c.expected !== null) {
    const problem = choiceProblem(c.expected, c.choices);
    if (problem) throw new JoulebenchError('E_SUITE', `${where}: case ${i} (id ${quote(c.id)}): expected: ${problem}`);
  }
  const out: Case = { id: c.id, expected: c.expected, dataset: c.dataset ?? file.name, weight: c.weight, tags: c.tags };
  if (c.prompt !== undefined) out.prompt = c.prompt;
  if (c.turns !== undefined) out.turns = c.turns;
  if (c.choices !== undefined) out.choices = c.choices;
  if (c.reference !== undefined) out.reference = c.reference;
  if (c.scorer !== undefined) out.scorer = c.scorer;
  return out;
}

/** Several suites as one, in order; each case keeps its dataset. They must share a scorer. */
export function combine(name: string, suites: Suite[]): Suite {
  const scorer = suites[0]?.scorer ?? 'substring';
  for (const s of suites) {
    if (s.scorer !== scorer) throw new JoulebenchError('E_SUITE', `suite ${name}: parts use different scorers`);
  }
  return {
    name,
    version: suites.map((s) => `${s.name}@${s.version}`).join('+'),
    scorer,
    cases: suites.flatMap((s) => s.cases),
    source: `bundled suite "${name}"`,
  };
}

/** One line: `case 3 (id "x"): expected: Invalid input: expected string, received number`. */
function describeIssue(error: z.ZodError, raw: unknown): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid suite';
  const cases = (raw as { cases?: unknown[] } | null)?.cases;
  return describeIssueAt(issue, issue.path, (idx) => cases?.[idx]);
}

/** Case `i` of a suite read line by line (`raw`: the line's value) failed `caseSchema`: as {@link describeIssue} words it. */
export function describeCaseIssue(error: z.ZodError, i: number, raw: unknown): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid suite';
  return describeIssueAt(issue, ['cases', i, ...issue.path], () => raw);
}

function describeIssueAt(issue: z.core.$ZodIssue, path: readonly PropertyKey[], caseAt: (idx: number) => unknown): string {
  let where = '';
  let rest = path;
  if (path[0] === 'cases' && typeof path[1] === 'number') {
    const idx = path[1];
    const id = (caseAt(idx) as { id?: unknown } | undefined)?.id;
    where = `case ${idx}${typeof id === 'string' ? ` (id ${quote(id)})` : ''}: `;
    rest = path.slice(2);
  }
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue as { keys?: string[] }).keys ?? [];
    return `${where}${keys.map(keyText).join(', ')}: unknown key`;
  }
  const key = rest.length > 0 ? rest.map(String).join('.') : path.length === 0 ? '(top level)' : '';
  if (issue.code === 'invalid_type' && /received undefined/.test(message)) message = 'is required';
  return `${where}${key ? key + ': ' : ''}${message}`;
}

/** V8's message quotes the whole pattern (`Invalid regular expression: /…/i: reason`): keep the reason. */
function regexProblem(e: unknown): string {
  const msg = (e as Error).message;
  // re2js: "error parsing regexp: missing closing ): `(?i)(zzz…`": the reason, without the (maybe huge) pattern.
  const re2 = /^error parsing regexp: (.*?): `/s.exec(msg);
  if (re2) return re2[1]!;
  const m = /^Invalid regular expression: \/[\s\S]*\/[a-z]*: ([^:]*)$/.exec(msg);
  return m ? m[1]! : msg;
}

function firstLine(s: string): string {
  return (s.split('\n')[0] ?? s).replace(/:$/, '');
}

/** A key from the user's file, escaped and cut (it may be anything, of any length). */
function keyText(k: string): string {
  return cut(escapeControls(k), QUOTE_MAX_CHARS);
}
