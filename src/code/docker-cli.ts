import { execFileSync, spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { attempt } from './attempt.js';

/**
 * The Docker client, as the docker runner uses it: never the engine's socket, so what joulebench asks of
 * Docker is exactly the argv here (a test's fake `JOULEBENCH_DOCKER_BIN` records it).
 */

/** The outcome of one docker command. */
export interface DockerCall {
  code: number | null;
  stdout: string;
  stderr: string;
  timed_out: boolean;
  wall_ms: number;
  /** Set when the client itself could not be started (not installed). */
  spawn_error: string | null;
}

/** Bytes of each stream kept (the tail). */
const OUTPUT_BYTES = 64 * 1024;

/** Runs `bin args…` with `input` on stdin; past `timeout_ms` the client is killed (the caller removes the container). */
export function dockerCall(bin: string, args: readonly string[], opts: { input?: string; timeout_ms?: number } = {}): Promise<DockerCall> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let spawnError: string | null = null;
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const keep = (s: string, d: Buffer) => (s.length + d.length > OUTPUT_BYTES ? (s + d.toString()).slice(-OUTPUT_BYTES) : s + d.toString());
    child.stdout.on('data', (d: Buffer) => (stdout = keep(stdout, d)));
    child.stderr.on('data', (d: Buffer) => (stderr = keep(stderr, d)));
    // A command that never reads its stdin closes the pipe early; that is not an error of ours.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
    const timer = opts.timeout_ms !== undefined ? setTimeout(() => ((timedOut = true), child.kill('SIGKILL')), opts.timeout_ms) : undefined;
    child.on('error', (e: NodeJS.ErrnoException) => (spawnError = e.code === 'ENOENT' ? `${bin}: not found` : e.message));
    let done = false;
    const finish = (code: number | null) => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      resolve({ code: timedOut ? null : code, stdout, stderr, timed_out: timedOut, wall_ms: performance.now() - t0, spawn_error: spawnError });
    };
    child.on('close', finish);
    // A killed client may leave its output pipes open in something it started: once it has exited
    // after a timeout, stop waiting for them.
    child.on('exit', (code) => {
      if (!timedOut) return;
      child.stdout.destroy();
      child.stderr.destroy();
      finish(code);
    });
  });
}

/** The first line of what a failed docker command said. */
export function dockerSaid(c: DockerCall): string {
  return (c.spawn_error ?? (c.stderr.trim() || c.stdout.trim() || `exit ${c.code}`)).split('\n')[0]!.slice(0, 300);
}

/** Containers started by the docker runner and not yet removed, with their client (so an interrupted run can remove them). */
export const liveContainers = new Map<string, string>();

/** Force-removes every container still running (Ctrl-C); returns how many. Synchronous, for signal handlers. */
export function removeLiveContainers(): number {
  const n = liveContainers.size;
  for (const [name, bin] of liveContainers) {
    // Best effort: the run is ending.
    attempt(() => execFileSync(bin, ['rm', '-f', name], { stdio: 'ignore', timeout: 30_000 }), null);
  }
  liveContainers.clear();
  return n;
}
