import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, truncateSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { JoulebenchError } from '../core/errors.js';
import type { InferArm, InferRun, ThreadArm } from './types.js';
import { readTextFile } from '../read-text.js';

/** The format tag of a journal's header line. */
export const INFER_JOURNAL_FORMAT = 'joulebench-infer-journal/1';

/** What a journal was written for; a resume must match it field for field. */
export interface JournalIdentity {
  prompt_sha256: string;
  models: string[];
  /** `--threads` as given (`default` among them), duplicates removed: the arms, in order. */
  threads: ThreadArm[];
  base_url: string;
  /** Runs per phase and the request options: a different protocol would mix arms that are not comparable. */
  protocol: { cold: number; warmup: number; runs: number; num_predict: number; seed: number; temperature: number; num_ctx: number | null };
  /** `--gpu-power-limits`, W, when given: each is an arm dimension. */
  gpu_power_limits_w?: number[];
}

/** One resume, as recorded in the journal and in the final file's receipts. */
export interface ResumeRecord {
  resumed_utc: string;
  finished_arms_kept: string[];
  /** Arms interrupted midway: their runs are dropped and the arm re-runs from its cold phase. */
  partial_arms_discarded: { arm: string; runs_discarded: number }[];
}

/** A journal line. Each is appended (and fsynced) the moment the thing it records is finished. */
export type JournalEvent =
  | { event: 'header'; format: typeof INFER_JOURNAL_FORMAT; started_utc: string; identity: JournalIdentity }
  | ({ event: 'resume' } & ResumeRecord)
  | { event: 'arm-start'; arm: string; utc: string }
  | { event: 'run'; arm: string; run: InferRun }
  | { event: 'arm'; arm: InferArm; transforms: { counts: Record<string, number>; source_offsets: string[] } }
  | { event: 'failed'; utc: string; error: string };

/** Where runInfer sends its events; synchronous, so a line is on disk before the next request. */
export interface JournalSink {
  write(e: JournalEvent): void;
}

/** What a journal holds, read back. */
export interface JournalState {
  started_utc: string;
  identity: JournalIdentity;
  /** Finished arms by id, receipts and all. */
  finished: Map<string, InferArm>;
  /** Cumulative transform counts as of the last finished arm. */
  transforms: { counts: Record<string, number>; source_offsets: string[] } | null;
  /** Arms started but not finished since the last resume, with the runs they had. */
  partial: Map<string, number>;
  resumes: ResumeRecord[];
  /** Every run line in the journal (finished or not). */
  run_lines: number;
}

/** `<out>.partial.jsonl`: the journal that sits beside a run file until it is written. */
export function journalPathFor(out: string): string {
  return `${out}.partial.jsonl`;
}

/** The append-only journal of an infer run: a JSON line per finished run and arm, fsynced, so a killed run keeps what it finished. */
export class InferJournal implements JournalSink {
  private constructor(
    readonly path: string,
    private fd: number | null,
  ) {}

  /** Starts a new journal (refusing to overwrite an unfinished one) with its header line. */
  static create(path: string, identity: JournalIdentity, started_utc: string): InferJournal {
    if (existsSync(path)) {
      throw new JoulebenchError('E_USAGE', `${path}: an unfinished run's journal is here: add --resume to continue it, or delete it to start over`);
    }
    mkdirSync(dirname(path), { recursive: true });
    const j = new InferJournal(path, openSync(path, 'a'));
    j.write({ event: 'header', format: INFER_JOURNAL_FORMAT, started_utc, identity });
    return j;
  }

  /** Reopens an existing journal for appending, after `readJournal` has cut any torn last line. */
  static reopen(path: string): InferJournal {
    return new InferJournal(path, openSync(path, 'a'));
  }

  write(e: JournalEvent): void {
    if (this.fd === null) throw new JoulebenchError('E_RUN', `${this.path}: journal already closed`);
    writeSync(this.fd, JSON.stringify(e) + '\n');
    fsyncSync(this.fd);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /** Closes and deletes the journal (once the run file holding everything is written). */
  remove(): void {
    this.close();
    rmSync(this.path, { force: true });
  }
}

/** Reads a journal back; a torn last line is cut off the file, any other unreadable line is an error naming it. */
export function readJournal(path: string): JournalState {
  let text = readTextFile(path, 'E_USAGE', { missing: 'no journal to resume (it is written beside --out as <out>.partial.jsonl)' });
  const end = text.lastIndexOf('\n') + 1;
  if (end < text.length) {
    truncateSync(path, Buffer.byteLength(text.slice(0, end)));
    text = text.slice(0, end);
  }
  const lines = text.split('\n').filter((l) => l !== '');
  let header: Extract<JournalEvent, { event: 'header' }> | null = null;
  const finished = new Map<string, InferArm>();
  const partial = new Map<string, number>();
  const resumes: ResumeRecord[] = [];
  let transforms: JournalState['transforms'] = null;
  let run_lines = 0;
  for (const [i, line] of lines.entries()) {
    let e: JournalEvent;
    try {
      e = JSON.parse(line) as JournalEvent;
    } catch {
      throw new JoulebenchError('E_INPUT', `${path}: line ${i + 1} is not JSON`);
    }
    if (i === 0) {
      if (e.event !== 'header' || e.format !== INFER_JOURNAL_FORMAT) throw new JoulebenchError('E_INPUT', `${path}: line 1 is not a ${INFER_JOURNAL_FORMAT} header`);
      header = e;
      continue;
    }
    if (e.event === 'arm-start') partial.set(e.arm, 0);
    else if (e.event === 'run') {
      run_lines++;
      partial.set(e.arm, (partial.get(e.arm) ?? 0) + 1);
    } else if (e.event === 'arm') {
      finished.set(e.arm.id, e.arm);
      partial.delete(e.arm.id);
      transforms = e.transforms;
    } else if (e.event === 'resume') {
      const { event: _event, ...record } = e;
      resumes.push(record);
      partial.clear(); // already reported as discarded by that resume
    }
  }
  if (header === null) throw new JoulebenchError('E_INPUT', `${path}: empty journal (no header line)`);
  return { started_utc: header.started_utc, identity: header.identity, finished, transforms, partial, resumes, run_lines };
}

/** The first field in which `now` differs from the journal's identity, as one line; null when they match. */
export function identityMismatch(journal: JournalIdentity, now: JournalIdentity): string | null {
  const short = (s: string): string => s.slice(0, 12);
  if (journal.prompt_sha256 !== now.prompt_sha256) return `prompt sha256 ${short(journal.prompt_sha256)}… in the journal, ${short(now.prompt_sha256)}… now`;
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
  if (!same(journal.models, now.models)) return `models ${journal.models.join(',')} in the journal, ${now.models.join(',')} now`;
  if (!same(journal.threads, now.threads)) return `threads ${journal.threads.join(',') || '(none)'} in the journal, ${now.threads.join(',') || '(none)'} now`;
  if (!same(journal.gpu_power_limits_w ?? [], now.gpu_power_limits_w ?? [])) return `GPU power limits ${journal.gpu_power_limits_w?.join(',') || '(none)'} in the journal, ${now.gpu_power_limits_w?.join(',') || '(none)'} now`;
  if (journal.base_url !== now.base_url) return `base URL ${journal.base_url} in the journal, ${now.base_url} now`;
  for (const k of Object.keys(now.protocol) as (keyof JournalIdentity['protocol'])[]) {
    if (journal.protocol[k] !== now.protocol[k]) return `${k} ${String(journal.protocol[k])} in the journal, ${String(now.protocol[k])} now`;
  }
  return null;
}

/** Writes a file atomically: a temp file beside it, fsynced, then renamed over the target. */
export function writeFileAtomic(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}
