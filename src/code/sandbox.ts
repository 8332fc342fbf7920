import { execFileSync } from 'node:child_process';
import { chownSync, closeSync, existsSync, lstatSync, mkdtempSync, openSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { JoulebenchError } from '../core/errors.js';
import { attempt } from './attempt.js';
import { seccompFile } from './seccomp.js';

/** What `--sandbox` asks for. */
export type SandboxMode = 'bwrap' | 'none' | 'auto';
/** What a datapoint actually ran under. */
export type SandboxKind = 'bwrap' | 'none';
export const SANDBOX_MODES: readonly SandboxMode[] = ['auto', 'bwrap', 'none'];

/** The uid/gid a root-started sandbox runs its commands as (nobody/nogroup on Debian). */
const SANDBOX_UID = 65534;
/** Default cap on processes (threads count) the sandboxed uid may hold. */
export const DEFAULT_MAX_PROCS = 1024;
/** Default memory limit of one solver or test run, MiB. */
export const DEFAULT_MEMORY_MB = 4096;

/** Paths one wrapped command gets besides its workdir. */
export interface WrapOptions {
  /** Hidden: an empty read-only tmpfs is mounted over each (the task folder, its suite). */
  hide?: readonly string[];
  /** Bound read-only at the same path; a file the sandbox's user cannot reach is copied in by content from a descriptor. */
  ro_binds?: readonly string[];
  /** Bound read-write at the same path (the folder a test run writes its report to). */
  rw_binds?: readonly string[];
}

/** A command ready to spawn: `fd_files[i]` is opened read-only and handed to it as file descriptor 3 + i. */
export interface WrappedCommand {
  argv: string[];
  fd_files: string[];
}

/** Wraps a command so it runs confined to its workdir. */
export interface Sandbox {
  readonly kind: SandboxKind;
  /** The uid that must own a workdir for the confined command to write it; `null`: leave ownership alone. */
  readonly run_as_uid: number | null;
  wrap(argv: readonly string[], workdir: string, opts?: WrapOptions): WrappedCommand;
  describe(): Record<string, unknown>;
}

/** No confinement: the before/after check of the surroundings is the only guard. `why` says why bwrap was not used. */
export function noSandbox(why?: string): Sandbox {
  return {
    kind: 'none',
    run_as_uid: null,
    wrap: (argv) => ({ argv: [...argv], fd_files: [] }),
    describe: () => ({
      kind: 'none',
      note: 'no confinement; writes outside the workdir are detected afterwards, not prevented',
      ...(why ? { bwrap_unavailable: why } : {}),
    }),
  };
}

/** How bubblewrap is started. */
interface BwrapOptions {
  bin?: string;
  writable?: readonly string[];
  /**
   * `drop-uid` (root only): bwrap is started as 65534 via `setpriv`, so the solver is unprivileged inside and out.
   * `keep-uid`: bwrap runs as the caller (root: uid 0 in a new user namespace with no capabilities).
   */
  uid_mode?: 'drop-uid' | 'keep-uid';
  /** RLIMIT_NPROC inside the sandbox (via prlimit); `null` for none. */
  max_procs?: number | null;
  /** A seccomp program refusing ptrace and process_vm_*; `null` to skip. */
  seccomp_file?: string | null;
  /** Bound read-only into every command (`--allow-read`). */
  allow_read?: readonly string[];
}

/**
 * bubblewrap: the filesystem read-only (hidden paths under an empty tmpfs), a private /tmp, the workdir
 * and `writable` read-write; new user, PID, IPC and UTS namespaces; no capabilities, no further user
 * namespaces; ptrace refused by seccomp; a cap on processes. The network is shared (agents call APIs).
 */
export function bwrapSandbox(opts: BwrapOptions = {}): Sandbox {
  const bin = opts.bin ?? 'bwrap';
  const writable = opts.writable ?? [];
  const dropUid = opts.uid_mode === 'drop-uid';
  const maxProcs = opts.max_procs === undefined ? DEFAULT_MAX_PROCS : opts.max_procs;
  const seccomp = opts.seccomp_file ?? null;
  const allowRead = opts.allow_read ?? [];
  return {
    kind: 'bwrap',
    run_as_uid: dropUid ? SANDBOX_UID : null,
    wrap(argv, workdir, w = {}) {
      // Descriptors handed to bwrap: 3 is the seccomp program, then files bound by content.
      const fdFiles: string[] = seccomp ? [seccomp] : [];
      const roBind = (p: string): string[] => {
        const st = statOrNull(p);
        if (dropUid && st?.isFile() && !reachableBy(SANDBOX_UID, p)) {
          fdFiles.push(p);
          return ['--perms', (st.mode & 0o555).toString(8).padStart(4, '0'), '--ro-bind-data', String(2 + fdFiles.length), p];
        }
        return ['--ro-bind', p, p];
      };
      const prefix = dropUid ? ['setpriv', `--reuid=${SANDBOX_UID}`, `--regid=${SANDBOX_UID}`, '--clear-groups', '--'] : [];
      const limit = maxProcs !== null ? ['prlimit', `--nproc=${maxProcs}:${maxProcs}`, '--'] : [];
      return {
        argv: [
          ...prefix,
          bin,
          '--ro-bind', '/', '/',
          '--dev', '/dev',
          '--proc', '/proc',
          '--ro-bind', '/proc/sys', '/proc/sys',
          '--tmpfs', '/tmp',
          // A path the sandbox's user cannot reach is already hidden (and bwrap could not mount over it).
          ...(w.hide ?? []).filter((p) => existsSync(p) && (!dropUid || reachableBy(SANDBOX_UID, p))).flatMap((p) => ['--tmpfs', p, '--remount-ro', p]),
          ...[...new Set([...allowRead, ...(w.ro_binds ?? [])])].flatMap(roBind),
          ...[...writable, ...(w.rw_binds ?? [])].flatMap((p) => ['--bind', p, p]),
          '--bind', workdir, workdir,
          '--unshare-user',
          '--disable-userns',
          '--unshare-pid',
          '--unshare-ipc',
          '--unshare-uts',
          '--cap-drop', 'ALL',
          ...(seccomp ? ['--seccomp', '3'] : []),
          '--die-with-parent',
          '--new-session',
          '--chdir', workdir,
          '--',
          ...limit,
          ...argv,
        ],
        fd_files: fdFiles,
      };
    },
    describe: () => ({
      kind: 'bwrap',
      bin,
      writable: [...writable],
      allow_read: [...allowRead],
      uid: dropUid ? SANDBOX_UID : 'caller (no capabilities in a new user namespace)',
      max_procs: maxProcs,
      seccomp: seccomp ? 'ptrace, process_vm_readv, process_vm_writev refused' : 'none for this architecture',
      note: 'root filesystem read-only; task folder hidden; workdir and a private /tmp writable; own user, PID, IPC and UTS namespaces; no capabilities',
    }),
  };
}

/** Runs a wrapped command to its end, handing it its descriptors; throws as execFileSync does. */
export function runWrappedSync(w: WrappedCommand, o: { cwd?: string; env?: NodeJS.ProcessEnv; timeout_ms: number }): void {
  const fds: number[] = [];
  try {
    for (const f of w.fd_files) fds.push(openSync(f, 'r'));
    const [cmd, ...args] = w.argv;
    execFileSync(cmd!, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'ignore', 'pipe', ...fds], timeout: o.timeout_ms });
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

/** Runs `true` under `sandbox` in a scratch workdir; `null` when it works, else the first line of why not. */
function probe(sandbox: Sandbox): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'joulebench-bwrap-probe-'));
  try {
    if (sandbox.run_as_uid !== null) chownSync(dir, sandbox.run_as_uid, sandbox.run_as_uid);
    runWrappedSync(sandbox.wrap(['true'], dir), { timeout_ms: 10_000 });
    return null;
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    if (err.code === 'ENOENT') return `${err.path ?? 'bwrap'} is not installed (Debian/Ubuntu: apt-get install bubblewrap)`;
    const why = err.stderr?.toString().trim().split('\n')[0];
    return `bwrap cannot start here${why ? `: ${why}` : ''}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type ResolveSandboxOptions = Omit<BwrapOptions, 'uid_mode' | 'seccomp_file'>;

/** The hardened bwrap sandbox that starts here, or why none does. Root first tries to drop to uid 65534. */
export function bwrapFor(opts: ResolveSandboxOptions = {}): { sandbox: Sandbox | null; problem: string | null } {
  const base = { ...opts, seccomp_file: seccompFile() };
  const modes: ('drop-uid' | 'keep-uid')[] = process.getuid?.() === 0 ? ['drop-uid', 'keep-uid'] : ['keep-uid'];
  let problem: string | null = null;
  for (const uid_mode of modes) {
    const s = bwrapSandbox({ ...base, uid_mode });
    const p = probe(s);
    if (p === null) return { sandbox: s, problem: null };
    problem ??= p;
  }
  return { sandbox: null, problem };
}

/** Resolves `--sandbox`: `auto` takes bwrap when it works, else none; `bwrap` insists. */
export function resolveSandbox(mode: SandboxMode, opts: ResolveSandboxOptions = {}): Sandbox {
  if (mode === 'none') return noSandbox();
  const { sandbox, problem } = bwrapFor(opts);
  if (sandbox) return sandbox;
  if (mode === 'bwrap') throw new JoulebenchError('E_CONFIG', `--sandbox bwrap: ${problem} (use --sandbox none or auto to run without it)`);
  return noSandbox(problem ?? 'bwrap unavailable');
}

/** True when `uid` (not in any group of the path's folders) can walk from / down to `path`. */
export function reachableBy(uid: number, path: string): boolean {
  return firstClosed(uid, foldersTo(path)) === null;
}

/** `path` and every folder above it, from / down. */
function foldersTo(path: string): string[] {
  const out = ['/'];
  for (const part of resolve(path).split('/').filter(Boolean)) out.push(join(out[out.length - 1]!, part));
  return out;
}

/** The first of `dirs` that `uid` cannot stat, or that is a folder it cannot pass through; `null` when none. */
function firstClosed(uid: number, dirs: readonly string[]): string | null {
  for (const dir of dirs) {
    const st = statOrNull(dir);
    if (!st || (st.isDirectory() && !(st.uid === uid ? st.mode & 0o100 : st.mode & 0o001))) return dir;
  }
  return null;
}

export function statOrNull(p: string) {
  return attempt(() => statSync(p), null);
}

/** The first folder on the way to `path` that `uid` cannot pass through (a fix opens it), or `null`. */
export function blockingFolder(uid: number, path: string): string | null {
  return firstClosed(uid, foldersTo(path).slice(0, -1));
}

/** Gives a tree to `uid` (so the dropped-uid sandbox can write it); links are changed, not followed. */
export function chownTree(root: string, uid: number): void {
  const walk = (p: string) => {
    const st = lstatSync(p);
    if (st.isSymbolicLink()) return;
    chownSync(p, uid, uid);
    if (st.isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
  };
  walk(root);
}
