import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Datapoint } from '../oracle.js';
import { attempt } from '../attempt.js';
import { isUnder, listFiles, treeDigest, type CodeTask } from '../task.js';
import { inProcessOutcome, type Solver } from './solver.js';
import { joulebenchHome } from '../../home.js';
import { digestOf } from '../../core/canonical.js';

/**
 * `cascade:<solver>`: a cache in front of one solver: a repeated task replays the diff it stored once graded resolved
 * (graded as usual); keyed by the solver's identity (never replayed for another) and the task's content, not its name.
 */

/** Where a stored fix came from. */
export interface CacheOrigin {
  /** The wrapped solver that resolved the task, and a digest of its configuration. */
  solver: string;
  solver_digest: string;
  task: string;
  /** The run that stored it (`null` when the run had no id). */
  run_id: string | null;
  stored_utc: string;
}

/** One stored fix: every file the solver changed (content, base64) or deleted (`null`). */
interface CacheEntry {
  format: 'joulebench-code-cache/2';
  origin: CacheOrigin;
  files: Record<string, string | null>;
}

/** The cache folder: `$JOULEBENCH_HOME/code-cache` or `~/.joulebench/code-cache`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(joulebenchHome(env), 'code-cache');
}

/** A digest of a solver's identity: its id and what it describes of itself (the command, the preset). */
function solverDigest(solver: Solver): string {
  return 'sha256:' + createHash('sha256').update(JSON.stringify([solver.id, solver.describe()])).digest('hex');
}

/** A digest of what a task asks and how it is graded: prompt, before/, hidden tests, test command and format (not its name). */
function taskContentDigest(task: CodeTask): string {
  const tree = (root: string | null) => (root ? treeDigest(listFiles(root).map((f) => [f, readFileSync(join(root, f))] as [string, Buffer])) : '-');
  // Every member a string or a list of strings: canonical JSON is JSON.stringify's, so keys made before stay the same.
  return digestOf([task.prompt, task.test_cmd, task.test_format, task.test_files, task.fail_to_pass, task.pass_to_pass, tree(task.before_dir), tree(task.tests_dir)]);
}

/** The cache key: sha256 over the wrapped solver's digest and the task's content digest. */
export function cacheKey(task: CodeTask, inner: Solver): string {
  return createHash('sha256').update(solverDigest(inner)).update('\0').update(taskContentDigest(task)).digest('hex');
}

/** Wraps `inner` with the cache in `dir`. */
export function cascadeSolver(inner: Solver, dir: string, id = `cascade:${inner.id}`): Solver {
  const entryPath = (task: CodeTask) => join(dir, `${cacheKey(task, inner)}.json`);
  let runId: string | null = null;
  return {
    id,
    kind: 'cascade',
    ...(inner.preflight ? { preflight: (env: NodeJS.ProcessEnv) => inner.preflight!(env) } : {}),
    async solve(ctx) {
      runId = ctx.run_id ?? null;
      const entry = readEntry(entryPath(ctx.task), inner);
      if (entry) {
        applyEntry(ctx.workdir, entry);
        return { ...inProcessOutcome(), cache: 'hit', cache_origin: entry.origin };
      }
      return { ...(await inner.solve(ctx)), cache: 'miss' };
    },
    graded(task: CodeTask, workdir: string, dp: Datapoint) {
      if (dp.cache !== 'miss' || !dp.resolved) return;
      const files = diffTree(task, workdir);
      const path = entryPath(task);
      mkdirSync(dirname(path), { recursive: true });
      const origin: CacheOrigin = { solver: inner.id, solver_digest: solverDigest(inner), task: task.name, run_id: runId, stored_utc: new Date().toISOString() };
      const body: CacheEntry = { format: 'joulebench-code-cache/2', origin, files };
      // Written whole, then renamed: a crash never leaves half an entry for the next run to replay.
      writeFileSync(`${path}.tmp`, JSON.stringify(body));
      renameSync(`${path}.tmp`, path);
    },
    describe: () => ({
      kind: 'cascade',
      tiers: [`L0 cache (${inner.id}'s own fixes, keyed by its digest + the task's content)`, inner.id],
      cache_dir: dir,
      inner: { id: inner.id, ...inner.describe() },
    }),
  };
}

/** The stored entry, when it is whole and was stored by this very solver (an older or foreign entry is a miss). */
function readEntry(path: string, inner: Solver): CacheEntry | null {
  // A missing or damaged entry is a miss, never a guess.
  const e = attempt(() => JSON.parse(readFileSync(path, 'utf8')) as CacheEntry | null, null);
  const whole = e?.format === 'joulebench-code-cache/2' && e.files && typeof e.files === 'object' && e.origin && typeof e.origin === 'object';
  return whole && e.origin.solver_digest === solverDigest(inner) ? e : null;
}

/** The solver's changes against before/: regular files added or changed, files deleted; tests and node_modules/ left out. */
function diffTree(task: CodeTask, workdir: string): Record<string, string | null> {
  const files: Record<string, string | null> = {};
  const skip = (f: string) => isUnder(f, task.test_files) || /(^|\/)node_modules\//.test(f);
  const after = new Set(listFiles(workdir).filter((f) => lstatSync(join(workdir, f)).isFile()));
  for (const f of after) {
    if (skip(f)) continue;
    const now = readFileSync(join(workdir, f));
    const was = existsSync(join(task.before_dir, f)) ? readFileSync(join(task.before_dir, f)) : null;
    if (!was || !was.equals(now)) files[f] = now.toString('base64');
  }
  for (const f of listFiles(task.before_dir)) if (!after.has(f) && !skip(f)) files[f] = null;
  return files;
}

/** Writes a stored diff into the workdir; never through a link (a path whose folders are not real folders is skipped). */
function applyEntry(workdir: string, entry: CacheEntry): void {
  for (const [rel, content] of Object.entries(entry.files)) {
    const parts = rel.split('/');
    if (parts.some((p) => p === '' || p === '.' || p === '..')) continue;
    let dir = workdir;
    let ok = true;
    for (const part of parts.slice(0, -1)) {
      dir = join(dir, part);
      if (!existsSync(dir)) mkdirSync(dir);
      if (!lstatSync(dir).isDirectory()) ok = false;
    }
    if (!ok) continue;
    const target = join(workdir, rel);
    rmSync(target, { force: true });
    if (content !== null) writeFileSync(target, Buffer.from(content, 'base64'));
  }
}
