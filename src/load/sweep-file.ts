import { closeSync, openSync, readSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { JoulebenchError } from '../core/errors.js';
import { readTextFile } from '../read-text.js';
import type { RatePoint } from './curve.js';

/** The `format` of a rate sweep's document. */
export const RATE_SWEEP_FORMAT = 'joulebench-rate-sweep/1';

/**
 * What `run --request-rate R1,R2,… -o SWEEP.json` writes (and prints): the rates in the order run, per
 * rate its report file (`null` when none was written) and results file, and the curve. In a file,
 * paths are relative to the file's own folder, so a sweep folder can be moved as a whole.
 */
export interface RateSweepDoc {
  format: typeof RATE_SWEEP_FORMAT;
  rates: (number | 'inf')[];
  reports: (string | null)[];
  results: string[];
  curve: RatePoint[];
}

/** The `format` of a GPU power-limit sweep's document. */
export const POWER_LIMITS_FORMAT = 'joulebench-gpu-power-limits/1';

/**
 * What `run --request-rate R --gpu-power-limits W1,W2,…` writes (and prints): per limit, in the order run, its
 * report and results files and one curve point with the limit and the window's average power beside it.
 */
export interface PowerLimitsDoc {
  format: typeof POWER_LIMITS_FORMAT;
  request_rate: number | 'inf';
  gpu_power_limits_w: number[];
  /** Each GPU's original limit and allowed range (NVML). */
  gpus: Record<string, unknown>;
  reports: (string | null)[];
  results: string[];
  arms: (RatePoint & { gpu_power_limit_w: number; avg_power_w: number | null })[];
}

/** The document with its paths made relative to `docPath`'s folder (for writing it there). */
export function relativeTo<D extends { reports: (string | null)[]; results: string[] }>(doc: D, docPath: string): D {
  const dir = dirname(resolve(docPath));
  const rel = (p: string): string => relative(dir, resolve(p)) || '.';
  return { ...doc, reports: doc.reports.map((p) => (p === null ? null : rel(p))), results: doc.results.map(rel) };
}

/** True when `path` is a JSON file whose `format` is `format` (only its first 4 KiB are read). */
export function hasFormat(path: string, format: string): boolean {
  if (!/\.json$/i.test(path)) return false;
  const pattern = new RegExp(`"format"\\s*:\\s*"${format.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`);
  try {
    return pattern.test(fileHead(path, 4096).toString('utf8'));
  } catch {
    return false;
  }
}

/** The first `bytes` bytes of a file (fewer when it is shorter). */
export function fileHead(path: string, bytes: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    return buf.subarray(0, readSync(fd, buf, 0, bytes, 0));
  } finally {
    closeSync(fd);
  }
}

/** True when `path` is a rate sweep's JSON document. */
export const isRateSweepFile = (path: string): boolean => hasFormat(path, RATE_SWEEP_FORMAT);

/**
 * A run document (`what`: "a rate sweep", "a repeated load run") whose `format` and non-empty `results` list
 * are checked, with `at` resolving its paths against its folder and `bad` throwing the one-line E_INPUT error.
 */
export function readRunDoc<D extends { results: string[] }>(
  path: string,
  format: string,
  what: string,
  per: string,
): { doc: Partial<D> & { results: string[] }; at: (p: string) => string; bad: (key: string, why: string) => never } {
  let raw: unknown;
  try {
    raw = JSON.parse(readTextFile(path, 'E_INPUT'));
  } catch (e) {
    if (e instanceof JoulebenchError) throw e;
    throw new JoulebenchError('E_INPUT', `${path}: not ${what} (not valid JSON: ${(e as Error).message})`);
  }
  const d = raw as (Partial<D> & { format?: unknown }) | null;
  const bad = (key: string, why: string): never => {
    throw new JoulebenchError('E_INPUT', `${path}: not ${what} (${key}: ${why})`);
  };
  if (d === null || typeof d !== 'object' || d.format !== format) bad('format', `expected "${format}"`);
  const doc = d as Partial<D>;
  if (!Array.isArray(doc.results) || doc.results.length === 0 || !doc.results.every((p) => typeof p === 'string' && p.length > 0)) {
    bad('results', `expected a list of results file paths, one per ${per}`);
  }
  const dir = dirname(resolve(path));
  return { doc: doc as Partial<D> & { results: string[] }, at: (p) => (isAbsolute(p) ? p : resolve(dir, p)), bad };
}

/**
 * The run files a rate sweep's document names, resolved against its folder: per rate the report JSON
 * when it exists as JSON (its results file is found beside it), else the results file. A document
 * that is not one is a one-line error naming the file and the key (E_INPUT).
 */
export function rateSweepRunFiles(path: string, exists: (p: string) => boolean): string[] {
  const { doc, at, bad } = readRunDoc<RateSweepDoc>(path, RATE_SWEEP_FORMAT, 'a rate sweep', 'rate');
  const reports = Array.isArray(doc.reports) ? doc.reports : [];
  return doc.results.map((res, i) => {
    const rep = reports[i];
    if (typeof rep === 'string' && /\.json$/i.test(rep) && exists(at(rep))) return at(rep);
    const r = at(res);
    if (!exists(r)) bad(`results[${i}]`, `${r} does not exist`);
    return r;
  });
}
