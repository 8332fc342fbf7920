import { z } from 'zod';
import type { BenchReport } from '../core/aggregate.js';
import { JoulebenchError } from '../core/errors.js';
import { readTextFile } from '../read-text.js';

const nullableNumber = z.number().nullable();

/** The part of a report that `compare` and the other readers rely on. */
const reportSchema = z
  .object({
    case_count: z.number().int().nonnegative(),
    total_joules: nullableNumber,
    joules_per_correct: nullableNumber,
    accuracy_pct: nullableNumber,
    latency_p50_ms: nullableNumber,
    latency_p95_ms: nullableNumber,
    latency_p99_ms: nullableNumber,
    stage_distribution: z.record(z.string(), z.number()),
  })
  .loose();

/** Reads a report JSON file; anything else is one line naming the file and the key (E_REPORT, exit 2). */
export function readReportFile(path: string): BenchReport {
  const text = readTextFile(path, 'E_REPORT');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new JoulebenchError('E_REPORT', `${path}: not a joulebench report (not valid JSON: ${(e as Error).message})`);
  }
  const parsed = reportSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue?.path.length ? issue.path.join('.') : '(top level)';
    const why = issue?.code === 'invalid_type' && /undefined/.test(issue.message) ? 'is missing' : (issue?.message ?? 'invalid');
    throw new JoulebenchError('E_REPORT', `${path}: not a joulebench report (${key}: ${why})`);
  }
  return parsed.data as unknown as BenchReport;
}
