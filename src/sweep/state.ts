import { existsSync, readFileSync, renameSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { JoulebenchError } from '../core/errors.js';
import type { ExpandedPlan } from './plan.js';

export const SWEEP_FORMAT = 'joulebench-sweep/1';
const STATE_FILE = 'sweep.json';

/** One arm × suite of a sweep: an ordinary run with its own files. */
export interface SweepRunEntry {
  arm: string;
  suite: string;
  status: 'pending' | 'running' | 'done' | 'failed';
  report: string;
  results: string;
  receipt: string;
  history_id: number | null;
  error: string | null;
}

/** The sweep's state file (`sweep.json` in its folder): enough to resume it and to report on it. */
export interface SweepState {
  format: typeof SWEEP_FORMAT;
  id: string;
  plan_path: string;
  plan_digest: string;
  plan: ExpandedPlan;
  started_utc: string;
  finished_utc: string | null;
  parallel_arms: number;
  runs: SweepRunEntry[];
  /** `--alpha/--bootstrap/--bootstrap-max-units` of the latest start or resume, for `report DIR` (absent: the defaults). */
  comparison?: SweepComparisonSettings;
}

export interface SweepComparisonSettings {
  alpha: number;
  resamples: number;
  max_units?: number | 'inf';
  /** `sweep --p-adjust` (absent: the default, holm). */
  p_adjust?: 'holm' | 'none';
}

export function readSweepState(dir: string): SweepState {
  const path = join(dir, STATE_FILE);
  if (!existsSync(path)) throw new JoulebenchError('E_INPUT', `${dir}: not a sweep folder (no ${STATE_FILE})`);
  let s: SweepState;
  try {
    s = JSON.parse(readFileSync(path, 'utf8')) as SweepState;
  } catch (e) {
    throw new JoulebenchError('E_INPUT', `${path}: not valid JSON (${(e as Error).message.split('\n')[0]})`);
  }
  if (s?.format !== SWEEP_FORMAT || !Array.isArray(s.runs)) throw new JoulebenchError('E_INPUT', `${path}: not a joulebench sweep state (format ${SWEEP_FORMAT})`);
  return s;
}

/** Writes the state atomically (a kill mid-write leaves the previous state, never half a file). */
export function writeSweepState(dir: string, s: SweepState): void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, STATE_FILE);
  writeFileSync(`${path}.tmp`, JSON.stringify(s, null, 2) + '\n');
  renameSync(`${path}.tmp`, path);
}

export function isSweepDir(dir: string): boolean {
  return existsSync(join(dir, STATE_FILE));
}
