import { realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, resolve, sep } from 'node:path';
import { JoulebenchError } from './core/errors.js';
import { fileKind } from './read-text.js';

/** What is at an output path before anything is written. */
interface WriteTarget {
  path: string;
  /** False only for `/dev/null`: no side files go beside it. */
  regular: boolean;
}

/** Kernel pseudo-filesystems: a write there is never a report (and `/proc` files can swallow a write forever). */
const PSEUDO_ROOTS = ['/proc', '/sys'];

/**
 * Checks an output path before anything is spent or opened: a regular file, a path not yet there, or
 * `/dev/null`; anything else (a FIFO would block the writer) is E_OUTPUT naming the flag. Links are followed.
 */
export function checkWritePath(path: string, flag = '--out'): WriteTarget {
  refusePseudo(path, flag);
  const st = statOrNull(path, flag);
  if (st === null) return { path, regular: true };
  if (st.isFile()) return { path, regular: true };
  if (st.isDirectory()) throw new JoulebenchError('E_OUTPUT', `${flag} ${path}: is a directory; name a file inside it`);
  if (isDevNull(st)) return { path, regular: false };
  throw new JoulebenchError('E_OUTPUT', `${flag} ${path}: is ${fileKind(st)}, not a regular file; outputs go to regular files (or /dev/null)`);
}

/** Checks a folder that outputs will be written under: absent (it is made) or a folder, never under `/proc` or `/sys`. */
export function checkWriteDir(path: string, flag: string): void {
  refusePseudo(path, flag);
  const st = statOrNull(path, flag);
  if (st !== null && !st.isDirectory()) throw new JoulebenchError('E_OUTPUT', `${flag} ${path}: is ${fileKind(st)}, not a folder`);
}

function refusePseudo(path: string, flag: string): void {
  const real = realOrNearest(resolve(path));
  const root = PSEUDO_ROOTS.find((r) => real === r || real.startsWith(r + sep));
  if (root !== undefined) throw new JoulebenchError('E_OUTPUT', `${flag} ${path}: refusing to write under ${root} (a kernel file system, not a report file)`);
}

function statOrNull(path: string, flag: string): Stats | null {
  try {
    return statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    const why = code === 'EACCES' ? 'permission denied' : code === 'ENOTDIR' ? 'a part of the path is not a directory' : code === 'ELOOP' ? 'too many symbolic links' : ((e as Error).message.split('\n')[0] ?? '');
    throw new JoulebenchError('E_OUTPUT', `${flag} ${path}: cannot write: ${why}${code ? ` (${code})` : ''}`);
  }
}

let devNull: Stats | null | undefined;
function isDevNull(st: Stats): boolean {
  if (!st.isCharacterDevice()) return false;
  if (devNull === undefined) {
    try {
      devNull = statSync('/dev/null');
    } catch {
      devNull = null;
    }
  }
  return devNull !== null && devNull.rdev === st.rdev && devNull.isCharacterDevice();
}

/** The real path of `abs`, or of its nearest existing ancestor joined with the rest. */
function realOrNearest(abs: string): string {
  let dir = abs;
  const rest: string[] = [];
  for (;;) {
    try {
      const real = realpathSync(dir);
      return rest.length ? resolve(real, ...rest.reverse()) : real;
    } catch {
      const parent = dirname(dir);
      if (parent === dir || !isAbsolute(parent)) return abs;
      rest.push(dir.slice(parent.length).replace(/^\/+/, ''));
      dir = parent;
    }
  }
}
