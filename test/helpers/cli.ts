import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/joulebench.js', import.meta.url));

let testHome: string | null = null;
/** Runs record themselves in the history: tests keep it in a tmp dir, never the user's ~/.joulebench. */
function home(): string {
  if (testHome === null) {
    const dir = mkdtempSync(join(tmpdir(), 'jb-home-'));
    testHome = dir;
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return testHome;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a user would (NO_COLOR=1), with optional extra env and cwd. */
export function cli(args: string[], opts: { env?: Record<string, string>; cwd?: string; input?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd ?? process.cwd(),
      env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: home(), ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}
