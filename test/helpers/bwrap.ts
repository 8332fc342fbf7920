import { execFileSync } from 'node:child_process';

/** Whether bubblewrap can start a plain sandbox here (installed, user namespaces allowed). */
export function hasBwrap(): boolean {
  try {
    execFileSync('bwrap', ['--dev-bind', '/', '/', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
