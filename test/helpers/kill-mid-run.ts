import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { BIN } from './cli.js';

/**
 * Starts `joulebench ARGS` and SIGKILLs it once `results` holds `atBytes` bytes, like a crash or an
 * OOM kill mid-run; resolves with the signal that ended it (null: it finished before the kill landed).
 */
export function killMidRun(args: readonly string[], results: string, atBytes: number, home: string): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: home }, stdio: 'ignore' });
    const timer = setInterval(() => {
      if (existsSync(results) && statSync(results).size >= atBytes) {
        clearInterval(timer);
        child.kill('SIGKILL');
      }
    }, 2);
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      clearInterval(timer);
      resolve(signal);
    });
  });
}
