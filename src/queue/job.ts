import { z } from 'zod';

/** The one BullMQ queue name prefix joulebench uses; a routing suffix names required labels. */
const QUEUE_PREFIX = 'joulebench-arms';

/** Labels a job requires / a worker offers, e.g. `{gpu: 'h100', site: 'a'}`. */
export type Labels = Record<string, string>;

const label = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'labels are letters, digits, _ . - (1–64 chars)');

/** One arm × suite as a queue job: the session spec (no secret: keys by `credentials_ref`), a local suite's text, the labels required. */
export const ArmJobSchema = z
  .object({
    format: z.literal('joulebench-arm-job/1'),
    sweep_id: z.string().min(1).max(200),
    arm: z.string().min(1).max(200),
    suite: z.string().min(1).max(4096),
    /** A suite file shipped with the job: its base name and text (the worker writes it locally). */
    suite_file: z.object({ name: z.string().regex(/^[^/\\]{1,200}$/).refine((n) => n !== '.' && n !== '..', 'must be a file name'), text: z.string() }).strict().optional(),
    where: z.record(label, label).optional(),
    /** The SessionSpec without paths (the worker chooses its own files). */
    spec: z.record(z.string(), z.unknown()),
    /** The coordinator's joulebench version: a worker of another version refuses the job. */
    joulebench_version: z.string().min(1).max(100).optional(),
    /** The suite digest the coordinator computed for this arm: a worker whose own differs refuses the job. */
    suite_digest: z.string().min(1).max(200).optional(),
  })
  .strict();

export type ArmJob = z.infer<typeof ArmJobSchema>;

/** Keys a job's spec may not carry: paths on the coordinator's disk, and anything that looks like a secret. */
const FORBIDDEN_SPEC_KEYS = ['out', 'results', 'receipt', 'resume', 'history', 'apiKey', 'api_key', 'password', 'token'];

/** One line saying what is wrong with a job payload, or null when it is valid. */
export function jobProblem(data: unknown): string | null {
  const r = ArmJobSchema.safeParse(data);
  if (!r.success) {
    const i = r.error.issues[0]!;
    return `malformed job: ${i.path.join('.') || '(root)'}: ${i.message}`;
  }
  for (const k of FORBIDDEN_SPEC_KEYS) if (k in r.data.spec) return `malformed job: spec.${k} is not allowed in a queue job`;
  return null;
}

/** Why this worker must not run a job from a coordinator of another version (one line naming both), or null. */
export function versionProblem(job: Pick<ArmJob, 'joulebench_version'>, version: string): string | null {
  if (job.joulebench_version === version) return null;
  const theirs = job.joulebench_version === undefined ? 'a joulebench too old to name its version' : `joulebench ${job.joulebench_version}`;
  return `refused: the coordinator runs ${theirs}, this worker joulebench ${version} (run one version on both)`;
}

/** The queue a job with these required labels goes to (labels sorted, so the name is canonical). */
export function queueNameFor(where: Labels | undefined): string {
  const keys = Object.keys(where ?? {}).sort();
  if (keys.length === 0) return QUEUE_PREFIX;
  return `${QUEUE_PREFIX}.${keys.map((k) => `${k}=${where![k]}`).join(',')}`;
}

/** Every queue a worker with these labels serves: one per subset of its labels (at most 2^6). */
export function queuesServedBy(labels: Labels): string[] {
  const entries = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length > 6) throw new RangeError('at most 6 worker labels');
  const out: string[] = [];
  for (let mask = 0; mask < 1 << entries.length; mask++) {
    const subset: Labels = {};
    entries.forEach(([k, v], i) => {
      if (mask & (1 << i)) subset[k] = v;
    });
    out.push(queueNameFor(subset));
  }
  return out;
}

/** A job's id: stable for a sweep, so a restarted coordinator re-attaches instead of enqueueing twice. */
export function jobIdOf(job: Pick<ArmJob, 'sweep_id' | 'arm' | 'suite'>): string {
  return `${job.sweep_id}|${job.arm}|${job.suite}`.replace(/[:\s]/g, '_');
}

/** The Redis stream that carries a job's results records back to the coordinator. */
export function recordsKey(jobId: string): string {
  return `joulebench:records:${jobId}`;
}

/** Where a worker advertises itself (hash with its host receipt; expires unless refreshed). */
export function workerKey(workerId: string): string {
  return `joulebench:workers:${workerId}`;
}
