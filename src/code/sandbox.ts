import { execFileSync } from 'node:child_process';
import { JoulebenchError } from '../core/errors.js';

/** What `--sandbox` asks for. */
export type SandboxMode = 'bwrap' | 'none' | 'auto';
/** What a datapoint actually ran under. */
export type SandboxKind = 'bwrap' | 'none';
export const SANDBOX_MODES: readonly SandboxMode[] = ['auto', 'bwrap', 'none'];

/** Wraps a command so it runs confined to its workdir. */
export interface Sandbox {
  readonly kind: SandboxKind;
  /** The argv that runs `argv` in `workdir` under this sandbox. */
  wrap(argv: readonly string[], workdir: string): string[];
  describe(): Record<string, unknown>;
}

/** No confinement: the before/after check of the surroundings is the only guard. `why` says why bwrap was not used. */
export function noSandbox(why?: string): Sandbox {
  return {
    kind: 'none',
    wrap: (argv) => [...argv],
    describe: () => ({
      kind: 'none',
      note: 'no confinement; writes outside the workdir are detected afterwards, not prevented',
      ...(why ? { bwrap_unavailable: why } : {}),
    }),
  };
}

/**
 * bubblewrap: the whole filesystem read-only, a private /tmp, the workdir (and any `writable` paths)
 * read-write, its own PID namespace so every process dies with it. The network is shared (agents call
 * their APIs).
 */
export function bwrapSandbox(bin = 'bwrap', writable: readonly string[] = []): Sandbox {
  return {
    kind: 'bwrap',
    wrap(argv, workdir) {
      const binds = writable.flatMap((p) => ['--bind', p, p]);
      return [
        bin,
        '--ro-bind', '/', '/',
        '--dev', '/dev',
        '--proc', '/proc',
        '--tmpfs', '/tmp',
        ...binds,
        '--bind', workdir, workdir,
        '--unshare-pid',
        '--die-with-parent',
        '--new-session',
        '--chdir', workdir,
        '--',
        ...argv,
      ];
    },
    describe: () => ({ kind: 'bwrap', bin, writable: [...writable], note: 'root filesystem read-only; workdir and a private /tmp writable; own PID namespace' }),
  };
}

/** Whether bubblewrap can run here (installed, and user namespaces allowed); `null` when it can. */
export function bwrapProblem(bin = 'bwrap'): string | null {
  try {
    execFileSync(bin, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--die-with-parent', 'true'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 10_000,
    });
    return null;
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    if (err.code === 'ENOENT') return `${bin} is not installed (Debian/Ubuntu: apt-get install bubblewrap)`;
    const why = err.stderr?.toString().trim().split('\n')[0];
    return `${bin} cannot start here${why ? `: ${why}` : ''}`;
  }
}

/** Resolves `--sandbox`: `auto` takes bwrap when it works, else none; `bwrap` insists. */
export function resolveSandbox(mode: SandboxMode, opts: { bin?: string; writable?: readonly string[] } = {}): Sandbox {
  if (mode === 'none') return noSandbox();
  const bin = opts.bin ?? 'bwrap';
  const problem = bwrapProblem(bin);
  if (problem === null) return bwrapSandbox(bin, opts.writable ?? []);
  if (mode === 'bwrap') throw new JoulebenchError('E_CONFIG', `--sandbox bwrap: ${problem} (use --sandbox none or auto to run without it)`);
  return noSandbox(problem);
}
