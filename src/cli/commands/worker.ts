import { Command, InvalidArgumentError } from 'commander';
import { parseQueueUrl } from '../../queue/connection.js';
import type { Labels } from '../../queue/job.js';
import { startWorker } from '../../queue/worker.js';
import { dirname, join } from 'node:path';
import { defaultHistoryPath } from '../../report/history.js';
import type { CliIO } from '../io.js';
import { addMeterFlags, idleMsFrom, meterOptionsFrom, type MeterFlags } from '../meter-flags.js';
import { intAtLeast } from '../options.js';

interface WorkerFlags extends MeterFlags {
  queue: string;
  queuePasswordRef?: string;
  labels: Labels;
  concurrency: number;
  stallMs: number;
}

export function workerCommand(io: CliIO): Command {
  const cmd = new Command('worker')
    .description('run sweep arms from a queue (BullMQ on Redis) on this machine, with its own meters, until stopped')
    .requiredOption('--queue <redis://host:port/db>', 'the queue\'s Redis (a password in the URL is never printed)')
    .option('--queue-password-ref <env:NAME>', 'read the Redis password from this environment variable')
    .option('--labels <k=v,…>', 'what this machine offers; arms with `where:` labels run only on matching workers', parseLabels, {})
    .option('--concurrency <n>', 'arms at once (default 1: energy is attributed to one arm at a time)', intAtLeast(1), 1)
    .option('--stall-ms <ms>', 'a worker silent this long is presumed dead and its arm handed to another (BullMQ lock)', intAtLeast(1000), 30_000);
  return addMeterFlags(cmd).action(async (flags: WorkerFlags) => {
    const connection = parseQueueUrl(flags.queue, flags.queuePasswordRef, process.env);
    const worker = await startWorker({
      connection,
      labels: flags.labels,
      concurrency: flags.concurrency,
      dir: join(dirname(defaultHistoryPath(process.env)), 'worker'),
      env: process.env,
      meter_options: meterOptionsFrom(flags, process.env),
      idle_ms: idleMsFrom(flags),
      stall_ms: flags.stallMs,
      onLog: (line) => io.err(`joulebench worker: ${line}\n`),
    });
    await new Promise<void>((resolve) => {
      const stop = (): void => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    io.err('joulebench worker: stopping (the arm in progress is handed back)\n');
    await worker.close();
  });
}

function parseLabels(value: string): Labels {
  const out: Labels = {};
  for (const part of value.split(',')) {
    const m = /^([A-Za-z0-9_.-]{1,64})=([A-Za-z0-9_.-]{1,64})$/.exec(part.trim());
    if (!m) throw new InvalidArgumentError(`labels are k=v pairs of letters, digits, _ . - (got "${part}")`);
    out[m[1]!] = m[2]!;
  }
  return out;
}
