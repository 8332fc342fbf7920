import { homedir } from 'node:os';
import { join } from 'node:path';

/** joulebench's own folder: `$JOULEBENCH_HOME` when set and not blank, else `~/.joulebench`. */
export function joulebenchHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.JOULEBENCH_HOME && env.JOULEBENCH_HOME.trim() !== '' ? env.JOULEBENCH_HOME : join(homedir(), '.joulebench');
}
