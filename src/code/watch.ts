import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { attempt } from './attempt.js';

/** A snapshot of some folders: absolute path → fingerprint (type, mode, size and a content hash, or a link's target). */
type TreeSnapshot = Map<string, string>;

const HASH_LIMIT_BYTES = 1024 * 1024;

/** Fingerprints every entry under `roots` without following symlinks, skipping `exclude` (the workdir itself). */
export function snapshotTrees(roots: readonly string[], exclude: readonly string[] = []): TreeSnapshot {
  const skip = new Set(exclude.map((p) => resolve(p)));
  const snap: TreeSnapshot = new Map();
  const visit = (path: string) => {
    if (skip.has(path)) return;
    const st = attempt(() => lstatSync(path), null);
    if (!st) return;
    if (st.isSymbolicLink()) {
      snap.set(path, `link:${attempt(() => readlinkSync(path), '?')}`);
    } else if (st.isDirectory()) {
      snap.set(path, `dir:${st.mode}`);
      // An unreadable folder's contents are not watched.
      for (const n of attempt(() => readdirSync(path), []).sort()) visit(join(path, n));
    } else if (st.isFile()) {
      // Too big or unreadable: the mtime stands in for the content.
      const mtime = `mtime${st.mtimeMs}`;
      const hash = st.size <= HASH_LIMIT_BYTES ? attempt(() => createHash('sha256').update(readFileSync(path)).digest('hex'), mtime) : mtime;
      snap.set(path, `file:${st.mode}:${st.size}:${hash}`);
    } else {
      snap.set(path, `other:${st.mode}`);
    }
  };
  for (const r of roots) visit(resolve(r));
  return snap;
}

/** Paths added, removed or changed between two snapshots, each prefixed with what happened. */
export function diffSnapshots(before: TreeSnapshot, after: TreeSnapshot): string[] {
  const out: string[] = [];
  for (const [p, f] of after) {
    const was = before.get(p);
    if (was === undefined) out.push(`added ${p}`);
    else if (was !== f) out.push(`changed ${p}`);
  }
  for (const p of before.keys()) if (!after.has(p)) out.push(`removed ${p}`);
  return out.sort();
}

/** `root`'s snapshot by posix path relative to it, folders left out; `content_only`: a file is its bytes' hash. */
export function relativeSnapshot(root: string, content_only = false): Map<string, string> {
  const out = new Map<string, string>();
  const abs = resolve(root);
  for (const [p, f] of snapshotTrees([abs])) {
    if (f.startsWith('dir:')) continue;
    out.set(relative(abs, p).split(sep).join('/'), content_only && f.startsWith('file:') ? `file:${f.slice(f.lastIndexOf(':') + 1)}` : f);
  }
  return out;
}
