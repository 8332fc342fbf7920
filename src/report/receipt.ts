import { arch, cpus, hostname, platform, release, totalmem } from 'node:os';
import { redactQuery } from '../targets/openai/redact.js';
import { VERSION } from '../version.js';

/** A run's volatile facts (host, versions, times), kept out of the report so identical runs give byte-identical reports. */
export interface Receipt {
  format: 'joulebench-receipt/1';
  joulebench_version: string;
  node_version: string;
  started_utc: string;
  finished_utc: string;
  host: { hostname: string; platform: string; arch: string; release: string; cpu_model: string | null; cores: number; memory_bytes: number };
  argv: string[];
  [key: string]: unknown;
}

/** Host facts for receipts. */
export function hostFacts(): Receipt['host'] {
  const cpu = cpus();
  return {
    hostname: hostname(),
    platform: platform(),
    arch: arch(),
    release: release(),
    cpu_model: cpu[0]?.model ?? null,
    cores: cpu.length,
    memory_bytes: totalmem(),
  };
}

export function buildReceipt(parts: { started: Date; finished: Date; argv: string[]; extra: Record<string, unknown> }): Receipt {
  return {
    format: 'joulebench-receipt/1',
    joulebench_version: VERSION,
    node_version: process.version,
    started_utc: parts.started.toISOString(),
    finished_utc: parts.finished.toISOString(),
    host: hostFacts(),
    argv: parts.argv.map(redactQuery),
    ...parts.extra,
  };
}
