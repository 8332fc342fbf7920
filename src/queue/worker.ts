import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isJoulebenchError, JoulebenchError } from '../core/errors.js';
import type { MeterOptions } from '../meters/registry.js';
import { createMeter } from '../meters/registry.js';
import { hostFacts } from '../report/receipt.js';
import { runSession, sessionSuiteDigest } from '../session/run-session.js';
import type { SessionSpec } from '../session/spec.js';
import { checkQueueCredentials, redactQueue, redisOptions, type QueueConnection } from './connection.js';
import { jobIdOf, jobProblem, queuesServedBy, recordsKey, versionProblem, workerKey, type ArmJob, type Labels } from './job.js';
import { VERSION } from '../version.js';
import { recordKey, streamField } from './records.js';

export interface WorkerOptions {
  connection: QueueConnection;
  /** What this machine offers (`--labels gpu=h100,site=a`); jobs requiring a subset of them come here. */
  labels: Labels;
  /** Arms run at once (default 1: energy is attributed to one arm at a time). */
  concurrency: number;
  /** Where local results files go (`$JOULEBENCH_HOME/worker`). */
  dir: string;
  /** The environment `credentials_ref` is read from: this machine's, never the coordinator's. */
  env: NodeJS.ProcessEnv;
  /** This machine's meter settings (powercap root, coefficients), from its own flags and environment. */
  meter_options: MeterOptions;
  idle_ms?: number;
  /** How long a job's lock lasts without renewal, ms: a worker silent that long is presumed dead and its job re-queued (BullMQ's stall detection). */
  stall_ms?: number;
  onLog?(line: string): void;
}

export interface RunningWorker {
  id: string;
  close(): Promise<void>;
}

/** What a finished job returns to the coordinator (stored by BullMQ as the job's return value). */
export interface ArmJobResult {
  report: unknown;
  receipt: unknown;
  worker: string;
  host: string;
}

/**
 * A queue worker: runs arm jobs from every queue its labels serve as local sessions (its own meters),
 * streaming each results record back through Redis; a job a dead worker partly streamed resumes from them.
 */
export async function startWorker(o: WorkerOptions): Promise<RunningWorker> {
  const { Worker, UnrecoverableError } = await import('bullmq');
  const { Redis } = await import('ioredis');
  const id = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const log = (line: string): void => o.onLog?.(redactQueue(line, o.connection));
  await checkQueueCredentials(o.connection);
  const redis = new Redis(redisOptions(o.connection));
  redis.on('error', (e: Error) => log(`redis: ${e.message}`));

  // Advertise this machine: its host receipt, labels and which meters read here.
  const meters: Record<string, string> = {};
  for (const name of ['rapl', 'nvml']) {
    try {
      const m = await createMeter(name, o.meter_options);
      const p = await m.probe();
      meters[name] = p.available ? 'available' : `unavailable: ${p.reason}`;
      await m.close?.();
    } catch (e) {
      meters[name] = `unavailable: ${(e as Error).message.split('\n')[0]}`;
    }
  }
  const advert = JSON.stringify({ id, labels: o.labels, host: hostFacts(), meters, concurrency: o.concurrency });
  const advertise = (): void => void redis.set(workerKey(id), advert, 'EX', 60).catch(() => undefined);
  advertise();
  const heartbeat = setInterval(advertise, 20_000);
  heartbeat.unref();

  // One arm at a time across every queue this worker serves.
  let running = 0;
  const waiting: (() => void)[] = [];
  const acquire = async (): Promise<void> => {
    if (running >= o.concurrency) await new Promise<void>((r) => waiting.push(r));
    running++;
  };
  const release = (): void => {
    running--;
    waiting.shift()?.();
  };

  const processor = async (job: { id?: string; data: unknown; attemptsMade: number }): Promise<ArmJobResult> => {
    // A malformed job, or one from another version: failed at once, never retried.
    const problem = jobProblem(job.data) ?? versionProblem(job.data as ArmJob, VERSION);
    if (problem) {
      log(`job ${job.id}: ${problem}`);
      throw new UnrecoverableError(problem);
    }
    const arm = job.data as ArmJob;
    await acquire();
    try {
      return await runArm(arm, job.id ?? jobIdOf(arm));
    } catch (e) {
      const msg = redactQueue((e as Error).message.split('\n')[0] ?? String(e), o.connection);
      log(`job ${job.id}: ${msg}`);
      // A mistake in the job or this machine's setup (a missing key, a meter that cannot read) will not
      // go away by retrying on the same worker: fail it with the reason.
      if (isJoulebenchError(e)) throw new UnrecoverableError(msg);
      throw new Error(msg);
    } finally {
      release();
    }
  };

  const runArm = async (arm: ArmJob, jobId: string): Promise<ArmJobResult> => {
    const dir = join(o.dir, jobId.replace(/[^A-Za-z0-9._-]+/g, '_'));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const key = recordsKey(jobId);
    const spec = { ...(arm.spec as unknown as SessionSpec) };
    if (arm.suite_file) {
      const path = join(dir, arm.suite_file.name);
      writeFileSync(path, arm.suite_file.text);
      spec.suite = path;
    }
    if (arm.suite_digest !== undefined) {
      const own = sessionSuiteDigest(spec);
      if (own !== arm.suite_digest) {
        throw new JoulebenchError('E_SUITE', `refused: suite ${arm.suite} is ${arm.suite_digest} on the coordinator, ${own} on this worker (not the same cases)`);
      }
    }
    // What an earlier attempt (a worker that died) already streamed: this attempt resumes from it.
    const earlier = (await redis.xrange(key, '-', '+')) as [string, string[]][];
    const seen = new Set<string>();
    let header: string | null = null;
    const caseLines: string[] = [];
    for (const [, fields] of earlier) {
      const line = streamField(fields, 'r');
      if (line === null) continue;
      const rec = JSON.parse(line) as Record<string, unknown>;
      if (rec.record === 'header') header ??= line;
      else if (rec.record === 'case' && !seen.has(recordKey(rec))) {
        seen.add(recordKey(rec));
        caseLines.push(line);
      }
    }
    const results = join(dir, 'arm.results.jsonl');
    const resuming = header !== null && caseLines.length > 0;
    if (resuming) writeFileSync(results, [header!, ...caseLines].join('\n') + '\n');
    log(`job ${jobId}: ${resuming ? `resuming after ${caseLines.length} streamed case(s)` : 'starting'} (arm ${arm.arm}, suite ${arm.suite})`);
    let headerSent = header !== null;
    const send = (rec: Record<string, unknown>): void => {
      if (rec.record === 'header') {
        if (headerSent) return;
        headerSent = true;
      } else if (rec.record === 'case') {
        const k = recordKey(rec);
        if (seen.has(k)) return; // restored from the stream: already there
        seen.add(k);
      }
      void redis.xadd(key, '*', 'r', JSON.stringify(rec), 'w', id).catch((e: Error) => log(`job ${jobId}: could not stream a record: ${e.message}`));
    };
    const session = await runSession(
      {
        ...spec,
        results,
        ...(resuming ? { resume: results } : { overwrite: true }),
        history: false,
        meter_options: o.meter_options,
        ...(o.idle_ms !== undefined ? { idle_ms: o.idle_ms } : {}),
        labels: { ...(spec.labels ?? {}), sweep_id: arm.sweep_id, arm: arm.arm, worker: id },
      },
      { env: o.env, onRecord: send, onWarning: (w) => log(`job ${jobId}: warning: ${w}`) },
    );
    await redis.ping(); // every streamed record has reached Redis before the job is called done
    log(`job ${jobId}: done (${session.report.case_count} cases)`);
    return { report: session.report, receipt: session.receipt, worker: id, host: hostname() };
  };

  const stall = o.stall_ms ?? 30_000;
  const workers = queuesServedBy(o.labels).map(
    (name) =>
      new Worker(name, processor, {
        connection: redisOptions(o.connection) as never,
        concurrency: o.concurrency,
        lockDuration: stall,
        stalledInterval: Math.max(500, Math.floor(stall / 2)),
        maxStalledCount: 3,
      }),
  );
  for (const w of workers) w.on('error', (e: Error) => log(`queue: ${e.message}`));
  log(`worker ${id} serving ${workers.length} queue(s) on ${o.connection.display} (labels: ${Object.entries(o.labels).map(([k, v]) => `${k}=${v}`).join(',') || 'none'})`);
  return {
    id,
    async close() {
      clearInterval(heartbeat);
      await Promise.all(workers.map((w) => w.close()));
      await redis.del(workerKey(id)).catch(() => undefined);
      redis.disconnect();
    },
  };
}
