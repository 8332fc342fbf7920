import { localPriceProblem } from '../core/usd-parts.js';
import { readTextFile } from '../read-text.js';
import { z } from 'zod';
import { JoulebenchError } from '../core/errors.js';
import type { InferRunFile } from './protocol.js';

const n = z.number().nullable();
const run = z.object({ phase: z.enum(['cold', 'warmup', 'scored']), decode_tok_s: n, prefill_tok_s: n, ttft_ms: n, load_duration_ns: n }).loose();
const peak = z.object({ flops: z.number(), source: z.string() }).nullable();
const fileSchema = z
  .object({
    format: z.literal('joulebench-infer/1'),
    prompt_sha256: z.string(),
    started_utc: z.string(),
    finished_utc: z.string(),
    receipts: z.object({ machine_peak: z.object({ configured: peak, cpu_default: peak }) }).loose(),
    prices: z.unknown().refine((p) => p === undefined || localPriceProblem(p) === null, 'must be {electricity_usd_per_kwh, hardware_usd_per_hour} numbers >= 0').optional(),
    arms: z.array(
      z
        .object({
          id: z.string(),
          model: z.string(),
          num_thread: z.number().nullable(),
          parameter_count: n,
          cold_load: z.array(run),
          warmup_discarded: z.array(run),
          runs: z.array(run),
          receipts: z.object({ size_vram: n, cpu_only_receipt: z.boolean().nullable(), gpu_snapshot: z.enum(['identical', 'changed', 'unavailable']) }).loose(),
          contaminated: z.boolean(),
          contamination: z.string().nullable(),
        })
        .loose(),
    ),
  })
  .loose();

/** Reads a `joulebench infer` run file; anything else is one line naming the file and the key (E_REPORT). */
export function readInferFile(path: string): InferRunFile {
  const text = readTextFile(path, 'E_REPORT');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new JoulebenchError('E_REPORT', `${path}: not an infer run file (${(e as Error).message.split('\n')[0]})`);
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue?.path.length ? issue.path.join('.') : '(top level)';
    throw new JoulebenchError('E_REPORT', `${path}: not a joulebench infer run file (${key}: ${issue?.message ?? 'invalid'})`);
  }
  return parsed.data as unknown as InferRunFile;
}
