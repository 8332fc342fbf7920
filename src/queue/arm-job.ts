import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { JoulebenchError } from '../core/errors.js';
import { loadConfig } from '../config/load.js';
import { sessionSuiteDigest } from '../session/run-session.js';
import type { SessionSpec } from '../session/spec.js';
import { VERSION } from '../version.js';
import type { ArmJob, Labels } from './job.js';

/** Spec keys that name files on the coordinator's disk or its history: a worker chooses its own. */
const LOCAL_ONLY = ['out', 'results', 'receipt', 'resume', 'overwrite', 'history', 'meter_options', 'argv'] as const;

/**
 * A local session spec as a queue job for another machine: config inline, suite file as text, this
 * machine's paths and meters left out, no secrets; with the version and suite digest the worker checks.
 */
export function armJobOf(sweep_id: string, arm: string, spec: SessionSpec, where?: Labels): ArmJob {
  const out: Record<string, unknown> = { ...spec };
  for (const k of LOCAL_ONLY) delete out[k];
  if (typeof spec.config === 'string') {
    out.config = { where: spec.config, config: loadConfig(spec.config).config };
  }
  let suite_file: ArmJob['suite_file'];
  if (existsSync(spec.suite) && statSync(spec.suite).isFile()) {
    suite_file = { name: basename(spec.suite), text: readFileSync(spec.suite, 'utf8') };
    out.suite = basename(spec.suite);
  }
  if (spec.data !== undefined) {
    throw new JoulebenchError('E_USAGE', `arm ${arm}: --data files cannot travel on the queue yet; put the questions in a suite file`);
  }
  return {
    format: 'joulebench-arm-job/1',
    sweep_id,
    arm,
    suite: spec.suite,
    ...(suite_file ? { suite_file } : {}),
    ...(where && Object.keys(where).length > 0 ? { where } : {}),
    spec: out,
    joulebench_version: VERSION,
    suite_digest: sessionSuiteDigest(spec),
  };
}
