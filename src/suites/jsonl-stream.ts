import { randomBytes } from 'node:crypto';
import { basename, extname } from 'node:path';
import { JoulebenchError } from '../core/errors.js';
import type { Case, StreamedSuite, Suite } from '../core/types.js';
import { SuiteDigester } from './digest.js';
import { fileLines, type FileStamp } from './lines.js';
import { BUNDLED_SUITES, describeCaseIssue, duplicateId, toCase } from './loader.js';
import { caseSchema } from './schema.js';
import { compileFilter, describeSelection, type Selection } from './select.js';

/** Cases handed to the runner at a time. */
export const STREAM_BATCH = 256;

/** Whether a suite streams its cases (else they are all in memory). */
export function isStreamed(s: Suite | StreamedSuite): s is StreamedSuite {
  return 'stream' in s;
}

/** A streamed suite's cases read into memory in one pass; `ownDigest`: keep the suite's digest (MMLU). */
export function inMemory(s: StreamedSuite, ownDigest: boolean): Suite {
  const cases: Case[] = [];
  for (const batch of s.stream.batches()) for (const c of batch) cases.push(c);
  return { name: s.name, version: s.version, scorer: s.scorer, cases, source: s.source, ...(ownDigest ? { digest: s.digest } : {}) };
}

/** Whether `path` names a suite file that can be streamed (JSONL). */
export function isJsonlSuitePath(path: string): boolean {
  const ext = extname(path).toLowerCase();
  return ext === '.jsonl' || ext === '.ndjson';
}

export interface JsonlStreamOptions {
  /** `--filter` / `--limit`: applied in both passes; the selection enters the version (as selectCases does). */
  selection?: Selection;
  /** Relabels the suite's version before the selection is appended (`params.retry`: `…/retry-N`). */
  relabel?: (version: string) => string;
  chunkBytes?: number;
  /** Each selected case as the first pass reads it, before the whole file is checked. */
  onSelected?: (index: number, c: Case) => void;
}

/**
 * A JSONL suite read as a stream, in two passes. Now: every line is validated with `loadSuiteFile`'s
 * checks, messages and precedence, and the selection counted and digested (only an id fingerprint per
 * case is kept). Per pass of the run (`stream.batches()`): the file is read again, its stamp compared
 * on open and its digest before the last batch; a change is E_SUITE. The digest is `loadSuiteFile`'s.
 */
export function streamJsonlSuite(path: string, opts: JsonlStreamOptions = {}): StreamedSuite {
  const where = `suite ${path}`;
  const name = basename(path, extname(path));
  const file = { name, scorer: 'substring' as const };
  const sel = opts.selection ?? {};
  const re = sel.filter !== undefined ? compileFilter(sel.filter) : null;
  const limit = sel.limit ?? Infinity;
  const what = describeSelection(sel);
  const version = (opts.relabel ?? ((v: string) => v))('1') + (what ? `+${what}` : '');
  const selects = (c: Case): boolean => re === null || re.test(c.id) || re.test(c.dataset) || (c.tags ?? []).some((t) => re.test(t));
  const lineOpts = { code: 'E_SUITE' as const, where, ...(opts.chunkBytes !== undefined ? { chunkBytes: opts.chunkBytes } : {}) };

  // Pass 1: check everything, count and digest the selection.
  let stamp: FileStamp | null = null;
  let jsonError: JoulebenchError | null = null;
  let schemaError: JoulebenchError | null = null;
  let caseError: JoulebenchError | null = null;
  let caseErrorAt = Infinity;
  const ids = new IdFingerprints();
  const digester = new SuiteDigester();
  let total = 0;
  let judged = false;
  for (const { line, n } of fileLines(path, { ...lineOpts, suffix: ` (bundled suites: ${BUNDLED_SUITES.join(', ')})`, onOpen: (s) => (stamp = s) })) {
    if (line.trim() === '') continue;
    // Once a line is not JSON, only bad UTF-8 further on can outrank it: the rest is read, not parsed.
    if (jsonError) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      jsonError = new JoulebenchError('E_SUITE', `${where}: line ${n}: not valid JSON (${(e as Error).message})`);
      continue;
    }
    const i = total++;
    if (schemaError) continue;
    const parsed = caseSchema.safeParse(raw);
    if (!parsed.success) {
      schemaError = new JoulebenchError('E_SUITE', `${where}: ${describeCaseIssue(parsed.error, i, raw)}`);
      continue;
    }
    if (caseError) continue;
    const c = parsed.data;
    ids.add(c.id);
    let kase: Case;
    try {
      kase = toCase(c, i, where, file);
    } catch (e) {
      caseError = e as JoulebenchError;
      caseErrorAt = i;
      continue;
    }
    if (digester.count < limit && selects(kase)) {
      opts.onSelected?.(digester.count, kase);
      digester.add(kase);
      if (kase.scorer === 'judge') judged = true;
    }
  }
  if (jsonError ?? schemaError) throw jsonError ?? schemaError;
  // Fingerprints seen twice before the first other case problem: confirmed against the file afterwards.
  const suspects = ids.repeated();
  // A duplicate comes before any other problem of a later case, as the in-memory loader checks them.
  const duplicate = suspects.size > 0 ? firstRepeat(caseIds(path, lineOpts, caseErrorAt), suspects) : null;
  if (duplicate) throw duplicateId(where, duplicate.at, duplicate.id, duplicate.first);
  if (caseError) throw caseError;
  if (total === 0) throw new JoulebenchError('E_SUITE', `${where}: cases: must hold at least one case`);
  const count = digester.count;
  if (count === 0) throw new JoulebenchError('E_USAGE', `--filter/--limit (${what}) selected no case of suite ${name} (${total} cases)`);
  const meta = { name, scorer: file.scorer, version };
  const digest = digester.digest(meta);
  const checked = stamp as FileStamp | null;

  const changed = changedOnDisk('E_SUITE', where);

  // Pass 2, once per pass of the run.
  function* cases(again: SuiteDigester): Generator<Case, void, undefined> {
    let i = 0;
    for (const { line } of fileLines(path, { ...lineOpts, onOpen: sameStamp(checked, () => changed('size, modification time or inode differ')) })) {
      if (again.count === count) break; // --limit: the rest is not asked
      if (line.trim() === '') continue;
      let kase: Case;
      try {
        const parsed = caseSchema.safeParse(JSON.parse(line));
        if (!parsed.success) throw changed(`case ${i} no longer valid`);
        kase = toCase(parsed.data, i, where, file);
      } catch (e) {
        throw e instanceof JoulebenchError && e.message.includes('changed on disk') ? e : changed(`case ${i} no longer valid`);
      }
      i++;
      if (!selects(kase)) continue;
      again.add(kase);
      yield kase;
    }
  }
  const batches = (): Generator<readonly Case[], void, undefined> => {
    const again = new SuiteDigester();
    return inBatches(cases(again), count, () => {
      if (again.count !== count || again.digest(meta) !== digest) throw changed('its cases no longer have the digest checked');
    });
  };

  return { name, version, scorer: file.scorer, source: where, digest, judged, stream: { count, batches } };
}

/** A second pass finds its file changed since the first: `why`, worded as one error. */
export function changedOnDisk(code: 'E_SUITE' | 'E_INPUT', where: string): (why: string) => JoulebenchError {
  return (why) => new JoulebenchError(code, `${where}: changed on disk since the run checked it (${why}); this run is incomplete: run it again`);
}

/** An `onOpen` that throws `changed()` when the file's stamp differs from the first pass's (`checked`; null: not compared). */
export function sameStamp(checked: FileStamp | null, changed: () => JoulebenchError): (s: FileStamp) => void {
  return (s) => {
    if (checked && (s.size !== checked.size || s.mtime_ns !== checked.mtime_ns || s.ino !== checked.ino)) throw changed();
  };
}

/** A second pass's cases in batches of {@link STREAM_BATCH}; the last (holding the `count`-th case) only once `check()` has not thrown. */
export function* inBatches(cases: Iterable<Case>, count: number, check: () => void): Generator<readonly Case[], void, undefined> {
  let batch: Case[] = [];
  let seen = 0;
  for (const c of cases) {
    batch.push(c);
    if (++seen < count && batch.length === STREAM_BATCH) {
      yield batch;
      batch = [];
    }
  }
  check();
  if (batch.length > 0) yield batch;
}

/** One more pass when an id fingerprint repeated: the first id that really repeats (a mere collision is no error), its index and its first's. */
export function firstRepeat(ids: Iterable<unknown>, suspects: ReadonlySet<string>): { id: string; at: number; first: number } | null {
  const firstAt = new Map<string, number>();
  let at = 0;
  for (const id of ids) {
    if (typeof id === 'string' && suspects.has(IdFingerprints.key(id))) {
      const first = firstAt.get(id);
      if (first !== undefined) return { id, at, first };
      firstAt.set(id, at);
    }
    at++;
  }
  return null;
}

/** The ids of a JSONL suite's cases before case `before` (from the first other problem on, that problem comes first). */
function* caseIds(path: string, opts: Parameters<typeof fileLines>[1], before: number): Generator<unknown, void, undefined> {
  let i = 0;
  for (const { line } of fileLines(path, opts)) {
    if (line.trim() === '') continue;
    if (i++ >= before) return;
    try {
      yield (JSON.parse(line) as { id?: unknown } | null)?.id;
    } catch {
      yield undefined; // changed since the first pass: the run's own pass will refuse the file
    }
  }
}

/**
 * The 53-bit fingerprints of a suite's ids (8 bytes a case, in 4 KiB chunks split 256 ways by their top
 * bits), to find repeated ids among millions of cases without holding the strings; a repeat is a suspect only.
 */
export class IdFingerprints {
  private buckets: Float64Array[][] = Array.from({ length: BUCKETS }, () => []);
  private used = new Uint16Array(BUCKETS).fill(CHUNK);

  add(id: string): void {
    const fp = fingerprint(id);
    const b = Math.floor(fp / BUCKET_SPAN);
    const chunks = this.buckets[b]!;
    let k = this.used[b]!;
    if (k === CHUNK) {
      chunks.push(new Float64Array(CHUNK));
      k = 0;
    }
    chunks[chunks.length - 1]![k] = fp;
    this.used[b] = k + 1;
  }

  /** The keys ({@link IdFingerprints.key}) of the fingerprints added more than once; the fingerprints are dropped. */
  repeated(): Set<string> {
    const out = new Set<string>();
    for (let b = 0; b < BUCKETS; b++) {
      const chunks = this.buckets[b]!;
      if (chunks.length === 0) continue;
      const all = new Float64Array((chunks.length - 1) * CHUNK + this.used[b]!);
      chunks.forEach((c, i) => all.set(i === chunks.length - 1 ? c.subarray(0, this.used[b]!) : c, i * CHUNK));
      this.buckets[b] = [];
      all.sort();
      for (let i = 1; i < all.length; i++) if (all[i] === all[i - 1]) out.add(String(all[i]));
    }
    this.used.fill(CHUNK);
    return out;
  }

  static key(id: string): string {
    return String(fingerprint(id));
  }
}

/** Fingerprints are split by their top 8 bits; 512 of them (4 KiB) a chunk. */
const BUCKETS = 256;
const CHUNK = 512;
const BUCKET_SPAN = 2 ** 45;

/** Seeded per process, so a suite cannot be written so that its ids collide. */
const SEED = randomBytes(8);
const SEED_A = SEED.readUInt32LE(0);
const SEED_B = SEED.readUInt32LE(4);

/** Two seeded 32-bit multiplicative hashes of the UTF-16 units, each finalised with the other: 53 bits of them, a whole number below 2^53. */
function fingerprint(id: string): number {
  let a = 0x9e3779b9 ^ SEED_A;
  let b = 0x85ebca6b ^ SEED_B;
  for (let k = 0; k < id.length; k++) {
    const u = id.charCodeAt(k);
    a = Math.imul(a ^ u, 0x01000193);
    b = Math.imul(b ^ u, 0x5bd1e995);
  }
  a = Math.imul(a ^ (a >>> 15), 0x2c1b3c6d) ^ Math.imul(b ^ (b >>> 13), 0x297a2d39);
  b = Math.imul(b ^ (b >>> 16), 0x85ebca6b) ^ Math.imul(a ^ (a >>> 13), 0xc2b2ae35);
  a = (a ^ (a >>> 16)) >>> 0;
  b = (b ^ (b >>> 16)) >>> 0;
  return a * 2 ** 21 + (b >>> 11);
}
