import { combineRunMeasures, type RunMeasures } from '../runner/run-measures.js';
import { appendFileSync, existsSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { prettyJson } from '../core/canonical.js';
import { JoulebenchError } from '../core/errors.js';
import { checkQueueCredentials, redactQueue, redisOptions, type QueueConnection } from './connection.js';
import { jobIdOf, queueNameFor, recordsKey, type ArmJob } from './job.js';
import { recordKey, streamField } from './records.js';
import { suiteSourceOf } from '../session/suite-source.js';
import type { ArmJobResult } from './worker.js';

/** One arm × suite to run on the queue, and where its files go on the coordinator's disk. */
export interface QueueArm {
  job: ArmJob;
  results: string;
  report: string;
  receipt: string;
}

interface QueueArmOutcome {
  arm: QueueArm;
  /** `null` when the job failed (see `error`). */
  result: ArmJobResult | null;
  error: string | null;
}

interface CoordinatorOptions {
  connection: QueueConnection;
  arms: QueueArm[];
  /** How often the records streams and job states are read, ms (default 200). */
  poll_ms?: number;
  /** A case (or other record) arrived from a worker and is now on disk. */
  onRecord?(arm: QueueArm, record: Record<string, unknown>, worker: string): void;
  onArmDone?(outcome: QueueArmOutcome): void;
  onLog?(line: string): void;
  signal?: AbortSignal;
}

/** What the coordinator has written to an arm's results file so far. */
interface ArmState {
  arm: QueueArm;
  jobId: string;
  queue: string;
  header: boolean;
  keys: Set<string>;
  lastId: string;
  done: QueueArmOutcome | null;
  /** Polls that found the job completed but read no result (see the poll loop); bounded. */
  resultless?: number;
  /** Each worker's `run_measures` line (over the cases it ran), combined into the arm's at the end. */
  measures?: Map<string, RunMeasures>;
  /** Workers whose cases reached the file, and whether cases came from an earlier coordinator's file or a lost job. */
  caseWorkers?: Set<string>;
  casesFromDisk?: boolean;
}

/**
 * Runs arms on a BullMQ queue, one job per arm × suite under a stable id, each streamed record appended to the
 * arm's results file as it arrives (each case once): a restart loses nothing (docs/queue.md).
 */

export async function runArmsOnQueue(o: CoordinatorOptions): Promise<QueueArmOutcome[]> {
  const { Queue, Job } = await import('bullmq');
  const { Redis } = await import('ioredis');
  const log = (line: string): void => o.onLog?.(redactQueue(line, o.connection));
  await checkQueueCredentials(o.connection);
  const redis = new Redis(redisOptions(o.connection));
  redis.on('error', (e: Error) => log(`redis: ${e.message}`));
  const queues = new Map<string, InstanceType<typeof Queue>>();
  const queueOf = (name: string): InstanceType<typeof Queue> => {
    let q = queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: redisOptions(o.connection) as never });
      q.on('error', (e: Error) => log(`queue: ${e.message}`));
      queues.set(name, q);
    }
    return q;
  };
  const states: ArmState[] = o.arms.map((arm) => {
    const local = readLocal(arm.results);
    const s: ArmState = { arm, jobId: jobIdOf(arm.job), queue: queueNameFor(arm.job.where), header: local.header, keys: local.keys, lastId: '-', done: null, casesFromDisk: local.keys.size > 0 };
    // Finished before a coordinator restart: its files are complete, nothing to ask again.
    if (local.ended && existsSync(arm.report) && existsSync(arm.receipt)) {
      s.done = { arm, result: { report: JSON.parse(readFileSync(arm.report, 'utf8')), receipt: JSON.parse(readFileSync(arm.receipt, 'utf8')), worker: '(earlier)', host: '(earlier)' }, error: null };
    }
    return s;
  });
  const enqueue = async (s: ArmState): Promise<void> => {
    // Three tries before the job is failed; a stalled (dead) worker's try counts as one.
    await queueOf(s.queue).add('arm', s.arm.job, { jobId: s.jobId, attempts: 3, removeOnComplete: false, removeOnFail: false });
  };
  try {
    for (const s of states) if (!s.done) await enqueue(s);
    log(`${states.length} job(s) on ${o.connection.display}`);
    for (;;) {
      if (o.signal?.aborted) throw new JoulebenchError('E_RUN', 'sweep aborted; continue it with sweep --resume');
      let open = 0;
      for (const s of states) {
        if (s.done) continue;
        open++;
        try {
          await drain(redis, s, o, log);
          const job = await Job.fromId(queueOf(s.queue), s.jobId);
          if (!job) {
            // Redis lost the job (restarted without persistence): give the cases back, enqueue again.
            log(`job ${s.jobId} is gone from Redis: enqueued again, resuming from the ${s.keys.size} case(s) on disk`);
            await restream(redis, s);
            await enqueue(s);
            // Its cases now come from more than one run of the job: no worker's measures are the arm's.
            s.casesFromDisk = true;
            continue;
          }
          const state = await job.getState();
          if (state === 'completed' || state === 'failed') {
            // `job` was read before its state: a job that finished in between has no return value or
            // reason in that copy (seen under load: an arm "done" with no result, no end line, no report).
            const ended = await Job.fromId(queueOf(s.queue), s.jobId);
            if (state === 'completed') {
              const result = ended?.returnvalue as ArmJobResult | null | undefined;
              if (!result || typeof result !== 'object') {
                // Never an arm "done" with nothing: poll again, and after 20 polls call it failed.
                s.resultless = (s.resultless ?? 0) + 1;
                if (s.resultless >= 20) finish(s, null, 'the job is completed but holds no result');
              } else {
                await drain(redis, s, o, log);
                finish(s, result, null);
                await redis.expire(recordsKey(s.jobId), 7 * 24 * 3600);
              }
            } else {
              finish(s, null, redactQueue(ended?.failedReason ?? job.failedReason ?? 'failed', o.connection));
            }
          }
        } catch (e) {
          log(`polling ${s.jobId}: ${(e as Error).message.split('\n')[0]}`); // Redis away: try again next round
        }
        if (s.done) o.onArmDone?.(s.done);
      }
      if (open === 0) break;
      await new Promise((r) => setTimeout(r, o.poll_ms ?? 200));
    }
  } finally {
    await Promise.all([...queues.values()].map((q) => q.close()));
    redis.disconnect();
  }
  return states.map((s) => s.done!);
}

/** Appends the records that arrived to the arm's results file (each case once); state changes only after the append, so a throw loses nothing. */
async function drain(redis: import('ioredis').Redis, s: ArmState, o: CoordinatorOptions, log: (line: string) => void): Promise<void> {
  for (;;) {
    const start = s.lastId === '-' ? '-' : `(${s.lastId}`;
    const entries = (await redis.xrange(recordsKey(s.jobId), start, '+', 'COUNT', 1000)) as [string, string[]][];
    if (entries.length === 0) return;
    const heard: { rec: Record<string, unknown>; worker: string; line: string }[] = [];
    const newKeys = new Set<string>();
    let header = s.header;
    for (const [, fields] of entries) {
      let line = streamField(fields, 'r');
      if (line === null) continue;
      const worker = streamField(fields, 'w') ?? '?';
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(line) as Record<string, unknown>;
      } catch {
        log(`job ${s.jobId}: a record from worker ${worker} is not JSON; skipped`);
        continue;
      }
      if (rec.record === 'header') {
        if (header) continue;
        header = true;
        // The suite is read again (the HTML report's prompts) from this machine's copy, not the worker's temporary one.
        const { suite_source: _w, suite_data: _d, suite_references: _r, ...rest } = rec;
        line = JSON.stringify({ ...rest, ...suiteSourceOf({ suite: s.arm.job.suite }) });
      } else if (rec.record === 'case') {
        const k = recordKey(rec);
        if (s.keys.has(k) || newKeys.has(k)) continue;
        newKeys.add(k);
        (s.caseWorkers ??= new Set()).add(worker);
      } else if (rec.record === 'end') {
        continue; // written once, when the job is complete
      } else if (rec.record === 'run_measures') {
        // One worker's idle and suite window, over the cases it ran: kept, and combined with the other
        // workers' into the arm's line when the job completes (see finish).
        (s.measures ??= new Map()).set(worker, rec as unknown as RunMeasures);
        continue;
      }
      heard.push({ rec, worker, line });
    }
    if (heard.length > 0) {
      mkdirSync(dirname(s.arm.results), { recursive: true });
      appendFileSync(s.arm.results, heard.map((h) => h.line).join('\n') + '\n');
    }
    s.header = header;
    for (const k of newKeys) s.keys.add(k);
    s.lastId = entries[entries.length - 1]![0];
    // Every record of the batch is announced, even past a callback that throws (the first error is rethrown).
    let failure: unknown = null;
    for (const h of heard) {
      try {
        o.onRecord?.(s.arm, h.rec, h.worker);
      } catch (e) {
        failure ??= e;
      }
    }
    if (failure !== null) throw failure;
  }
}

/** Streams the cases already on disk back to Redis (a job Redis forgot), so the next worker resumes from them. */
async function restream(redis: import('ioredis').Redis, s: ArmState): Promise<void> {
  if (!existsSync(s.arm.results)) return;
  const lines = readFileSync(s.arm.results, 'utf8').split('\n').filter((l) => l.trim() !== '');
  for (const line of lines) await redis.xadd(recordsKey(s.jobId), '*', 'r', line, 'w', 'coordinator');
  // lastId stays where it was: a worker still running the lost job may stream between these lines,
  // and the next drain must see its records (the given-back ones are skipped as already on disk).
}

function finish(s: ArmState, result: ArmJobResult | null, error: string | null): void {
  if (result) {
    // The arm's measures, as a local run writes them: only when every case came with its worker's line.
    const workers = [...(s.caseWorkers ?? [])];
    const lines = workers.map((w) => s.measures?.get(w)).filter((m): m is RunMeasures => m !== undefined);
    const measures = !s.casesFromDisk && lines.length === workers.length ? combineRunMeasures(lines) : null;
    appendFileSync(s.arm.results, (measures ? JSON.stringify(measures) + '\n' : '') + JSON.stringify({ record: 'end', scored: s.keys.size }) + '\n');
    writeFileSync(s.arm.report, prettyJson(result.report));
    writeFileSync(s.arm.receipt, prettyJson(result.receipt));
  }
  s.done = { arm: s.arm, result, error };
}

/** What an earlier coordinator already wrote for this arm (a restarted sweep continues the file). */
function readLocal(path: string): { header: boolean; keys: Set<string>; ended: boolean } {
  const keys = new Set<string>();
  let header = false;
  let ended = false;
  if (!existsSync(path)) return { header, keys, ended };
  let text = readFileSync(path, 'utf8');
  if (text.length > 0 && !text.endsWith('\n')) {
    // A torn last line (the coordinator was killed mid-append): cut it; its case comes again from the stream.
    text = text.slice(0, text.lastIndexOf('\n') + 1);
    truncateSync(path, Buffer.byteLength(text));
  }
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue; // a torn last line from a killed coordinator: its case comes again from the stream
    }
    if (rec.record === 'header') header = true;
    else if (rec.record === 'case') keys.add(recordKey(rec));
    else if (rec.record === 'end') ended = true;
  }
  return { header, keys, ended };
}
