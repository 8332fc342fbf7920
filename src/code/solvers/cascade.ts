import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Datapoint } from '../oracle.js';
import { isUnder, listFiles, treeDigest, type CodeTask } from '../task.js';
import { inProcessOutcome, type Solver } from './solver.js';

/**
 * `cascade:<solver>`: the L0 tier of seed 002's amortising cascade. A cache keyed on the task's prompt
 * and the content of its before/ tree sits in front of any solver: a repeated task replays the diff
 * stored the first time it was resolved (applied, then graded as usual — a stale entry that no longer
 * passes is not resolved); a miss runs the wrapped solver, and its diff is stored once it is graded
 * resolved. A hit runs no agent, so it costs $0 and only the replay's energy.
 */

/** One stored fix: every file the solver changed (content, base64) or deleted (`null`). */
interface CacheEntry {
  format: 'joulebench-code-cache/1';
  task: string;
  files: Record<string, string | null>;
}

/** The cache folder: `$JOULEBENCH_HOME/code-cache` or `~/.joulebench/code-cache`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.JOULEBENCH_HOME && env.JOULEBENCH_HOME.trim() !== '' ? env.JOULEBENCH_HOME : join(homedir(), '.joulebench');
  return join(home, 'code-cache');
}

/** The cache key: sha256 over the prompt and the before/ tree (paths and bytes). The task's name is not in it. */
export function cacheKey(task: CodeTask): string {
  const before = treeDigest(listFiles(task.before_dir).map((f) => [f, readFileSync(join(task.before_dir, f))] as [string, Buffer]));
  return createHash('sha256').update(task.prompt).update('\0').update(before).digest('hex');
}

/** Wraps `inner` with the cache in `dir`. */
export function cascadeSolver(inner: Solver, dir: string, id = `cascade:${inner.id}`): Solver {
  const entryPath = (task: CodeTask) => join(dir, `${cacheKey(task)}.json`);
  return {
    id,
    kind: 'cascade',
    async solve(ctx) {
      const entry = readEntry(entryPath(ctx.task));
      if (entry) {
        applyEntry(ctx.workdir, entry);
        return { ...inProcessOutcome(), cache: 'hit' };
      }
      return { ...(await inner.solve(ctx)), cache: 'miss' };
    },
    graded(task: CodeTask, workdir: string, dp: Datapoint) {
      if (dp.cache !== 'miss' || !dp.resolved) return;
      const files = diffTree(task, workdir);
      const path = entryPath(task);
      mkdirSync(dirname(path), { recursive: true });
      const body: CacheEntry = { format: 'joulebench-code-cache/1', task: task.name, files };
      // Written whole, then renamed: a crash never leaves half an entry for the next run to replay.
      writeFileSync(`${path}.tmp`, JSON.stringify(body));
      renameSync(`${path}.tmp`, path);
    },
    describe: () => ({ kind: 'cascade', tiers: ['L0 cache (prompt + before/ hash → stored diff)', inner.id], cache_dir: dir, inner: { id: inner.id, ...inner.describe() } }),
  };
}

function readEntry(path: string): CacheEntry | null {
  if (!existsSync(path)) return null;
  try {
    const e = JSON.parse(readFileSync(path, 'utf8')) as CacheEntry;
    return e.format === 'joulebench-code-cache/1' && e.files && typeof e.files === 'object' ? e : null;
  } catch {
    // A damaged entry is a miss, never a guess.
    return null;
  }
}

/** The solver's changes against before/: regular files added or changed, files deleted; tests and node_modules/ left out. */
function diffTree(task: CodeTask, workdir: string): Record<string, string | null> {
  const files: Record<string, string | null> = {};
  const skip = (f: string) => isUnder(f, task.test_files) || /(^|\/)node_modules\//.test(f);
  const after = new Set(listRegular(workdir));
  for (const f of after) {
    if (skip(f)) continue;
    const now = readFileSync(join(workdir, f));
    const was = existsSync(join(task.before_dir, f)) ? readFileSync(join(task.before_dir, f)) : null;
    if (!was || !was.equals(now)) files[f] = now.toString('base64');
  }
  for (const f of listFiles(task.before_dir)) if (!after.has(f) && !skip(f)) files[f] = null;
  return files;
}

function listRegular(root: string): string[] {
  return listFiles(root).filter((f) => lstatSync(join(root, f)).isFile());
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
