import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

/** A snapshot of some folders: absolute path → fingerprint (type, mode, size and a content hash, or a link's target). */
type TreeSnapshot = Map<string, string>;

const HASH_LIMIT_BYTES = 1024 * 1024;

/** Fingerprints every entry under `roots` without following symlinks, skipping `exclude` (the workdir itself). */
export function snapshotTrees(roots: readonly string[], exclude: readonly string[] = []): TreeSnapshot {
  const skip = new Set(exclude.map((p) => resolve(p)));
  const snap: TreeSnapshot = new Map();
  const visit = (path: string) => {
    if (skip.has(path)) return;
    let st;
    try {
      st = lstatSync(path);
    } catch {
      return;
    }
    if (st.isSymbolicLink()) {
      let target = '?';
      try {
        target = readlinkSync(path);
      } catch {
        // unreadable link: keep '?'
      }
      snap.set(path, `link:${target}`);
    } else if (st.isDirectory()) {
      snap.set(path, `dir:${st.mode}`);
      let names: string[] = [];
      try {
        names = readdirSync(path);
      } catch {
        // unreadable folder: its contents are not watched
      }
      for (const n of names.sort()) visit(join(path, n));
    } else if (st.isFile()) {
      let hash = `mtime${st.mtimeMs}`;
      if (st.size <= HASH_LIMIT_BYTES) {
        try {
          hash = createHash('sha256').update(readFileSync(path)).digest('hex');
        } catch {
          // unreadable: fall back to mtime
        }
      }
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
