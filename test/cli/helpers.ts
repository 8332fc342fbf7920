import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built CLI, as a user runs it. `npm test` builds dist/ first. */
export const BIN = fileURLToPath(new URL('../../bin/joulebench.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to completion with NO_COLOR and the given JOULEBENCH_HOME. */
export function jb(args: string[], opts: { cwd?: string; home: string; env?: NodeJS.ProcessEnv }): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: opts.home, ...opts.env },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Same, asynchronously (two at once). */
export function jbAsync(args: string[], opts: { cwd?: string; home: string }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd, env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: opts.home } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
