import { execFileSync } from 'node:child_process';
import { attempt } from './attempt.js';
import { execTree } from './process.js';

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
export async function dockerCall(bin: string, args: readonly string[], opts: { input?: string; timeout_ms: number }): Promise<DockerCall> {
  const inherited = { cwd: process.cwd(), env: process.env };
  const r = await execTree([bin, ...args], { ...opts, ...inherited, kill_grace_ms: 0, max_output_bytes: OUTPUT_BYTES });
  const { stdout, stderr, timed_out, wall_ms } = r;
  // execTree says `spawn <bin> ENOENT` for a client that is not installed.
  const spawn_error = r.spawn_error !== null && / ENOENT$/.test(r.spawn_error) ? `${bin}: not found` : r.spawn_error;
  return { code: timed_out ? null : r.exit_code, stdout, stderr, timed_out, wall_ms, spawn_error };
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
