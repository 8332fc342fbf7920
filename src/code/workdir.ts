import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { attempt } from './attempt.js';
import { listFiles, type CodeTask } from './task.js';
import { relativeSnapshot } from './watch.js';

/** A datapoint's private folder: `root/work` is the solver's workdir; `root` also holds a canary. */
type DatapointDirs = ReturnType<typeof prepareWorkdir>;

/** Datapoint folders created and not yet removed (so an interrupted run can remove them). */
const liveRoots = new Set<string>();

/** Removes every datapoint folder still present; returns how many. */
export function removeLiveDirs(): number {
  const n = liveRoots.size;
  for (const root of liveRoots) rmSync(root, { recursive: true, force: true });
  liveRoots.clear();
  return n;
}

/** Creates a fresh private folder and copies the task's before/ tree into its workdir. */
export function prepareWorkdir(task: CodeTask, tmpBase: string = tmpdir()) {
  mkdirSync(tmpBase, { recursive: true });
  const root = mkdtempSync(join(resolve(tmpBase), `joulebench-code-${task.name}-`));
  const workdir = join(root, 'work');
  liveRoots.add(root);
  copyTree(task.before_dir, workdir);
  // A file beside the workdir: a solver that writes to "../" changes it, and the check sees that.
  writeFileSync(join(root, 'outside-the-workdir.txt'), 'joulebench: a solver must not change this file\n');
  return { root, workdir };
}

/** Copies a tree, keeping symlinks as links (never copying what they point at). */
export function copyTree(src: string, dst: string): void {
  cpSync(src, dst, { recursive: true, verbatimSymlinks: true, force: true, errorOnExist: false });
}

/** Test paths whose content differs from before/ (edited, deleted, a link, a file added in a test folder). */
export function changedTestFiles(task: CodeTask, workdir: string): string[] {
  const changed = new Set<string>();
  for (const t of task.test_files) {
    // Folder modes are not compared, nor file modes: only the bytes a test run reads.
    const want = relativeSnapshot(join(task.before_dir, t), true);
    const have = ancestorsOf(workdir, t) === 'real' ? relativeSnapshot(join(workdir, t), true) : new Map<string, string>();
    for (const [k, v] of want) if (have.get(k) !== v) changed.add(joinRel(t, k));
    for (const k of have.keys()) if (!want.has(k)) changed.add(joinRel(t, k));
  }
  return [...changed].sort();
}

/** Hidden grading tests the solver wrote to: grading lays the task's version over them, so such a write is reported, never counted. */
export function changedHiddenTests(task: CodeTask, workdir: string): string[] {
  if (!task.tests_dir) return [];
  return listFiles(task.tests_dir).filter((rel) => {
    const ancestors = ancestorsOf(workdir, rel);
    const mine = ancestors === 'real' ? signature(join(workdir, rel)) : ancestors === 'missing' ? 'missing' : 'not-a-folder';
    return mine !== signature(join(task.before_dir, rel));
  });
}

/** What a path is, for comparison: missing, a link and its target, a folder, or a file's bytes' hash (a mode change alone is no edit). */
function signature(p: string): string {
  const st = lstatOrNull(p);
  if (!st) return 'missing';
  if (st.isSymbolicLink()) return `link:${readlinkSync(p)}`;
  if (!st.isFile()) return st.isDirectory() ? 'dir' : 'special';
  return `file:${createHash('sha256').update(readFileSync(p)).digest('hex')}`;
}

/** Copies each of `rels` from `srcRoot` to the same place under `dstRoot`, replacing what stands there: never through a planted link. */
export function layPaths(srcRoot: string, rels: readonly string[], dstRoot: string): void {
  for (const t of rels) {
    const parts = t.split(/[\\/]/).filter((p) => p !== '' && p !== '.');
    let dir = dstRoot;
    for (const part of parts.slice(0, -1)) {
      dir = join(dir, part);
      const st = lstatOrNull(dir);
      if (st && !st.isDirectory()) rmSync(dir, { force: true, recursive: true });
      if (!st || !st.isDirectory()) mkdirSync(dir);
    }
    const target = join(dstRoot, t);
    rmSync(target, { force: true, recursive: true });
    copyTree(join(srcRoot, t), target);
  }
}

/**
 * Puts the pristine test files back, or says why it cannot (`chattr +i`, a permission taken away): grading would then
 * run the solver's tests, so the caller marks the datapoint invalid with this reason.
 */
export function restoreTestFilesOrWhy(task: CodeTask, workdir: string): string | null {
  try {
    layPaths(task.before_dir, task.test_files, workdir);
    return null;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const where = err.path ? relative(workdir, err.path) || '.' : task.test_files.join(', ');
    return `the pristine test files could not be restored (${err.code ?? err.message} on ${where}): the solver made them unremovable or unwritable (an immutable flag, a permission change), so its tests could not be replaced by the task's`;
  }
}

export function removeDirs(dirs: DatapointDirs): void {
  try {
    rmSync(dirs.root, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    // A solver may have taken away its own permissions (chmod 000) or set the immutable or append-only
    // flag (chattr +i / +a, as root): undo both and retry once.
    spawnSync('chattr', ['-R', '-f', '-i', '-a', dirs.root], { stdio: 'ignore', timeout: 30_000 });
    // chmod -R does not follow the links it meets.
    spawnSync('chmod', ['-R', 'u+rwx', dirs.root], { stdio: 'ignore', timeout: 30_000 });
    rmSync(dirs.root, { recursive: true, force: true, maxRetries: 3 });
  }
  liveRoots.delete(dirs.root);
}

/** Forgets a folder kept with `--keep` (an interrupted run leaves it in place). */
export function keepDirs(dirs: DatapointDirs): void {
  liveRoots.delete(dirs.root);
}

export function lstatOrNull(p: string) {
  return attempt(() => lstatSync(p), null);
}

/** What stands on the way from `root` to `rel`: real folders only, a folder missing, or a link or file. */
function ancestorsOf(root: string, rel: string): 'real' | 'missing' | 'not-a-folder' {
  const parts = rel.split(/[\\/]/).filter((p) => p !== '' && p !== '.');
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    dir = join(dir, part);
    const st = lstatOrNull(dir);
    if (!st) return 'missing';
    if (!st.isDirectory()) return 'not-a-folder';
  }
  return 'real';
}

function joinRel(base: string, rel: string): string {
  return rel === '' ? base : `${base.replace(/\/+$/, '')}/${rel}`;
}
