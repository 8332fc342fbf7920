import { spawnSync } from 'node:child_process';
import { BIN, cli, type CliResult } from '../helpers/cli.js';

export { BIN, type CliResult };

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
  return cli(args, { ...(opts.cwd ? { cwd: opts.cwd } : {}), env: { JOULEBENCH_HOME: opts.home } });
}
