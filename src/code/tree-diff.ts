import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The binary-safe unified diff from `beforeDir` to `afterDir` without `exclude`; empty when nothing
 * changed. Made in a private git folder, so nothing the solver put in its tree (a `.git`, hooks, config,
 * filters) takes part; only `.gitignore` rules apply, as to `git add -A`.
 */
export function treeDiff(beforeDir: string, afterDir: string, exclude: readonly string[] = []): string {
  const gitDir = mkdtempSync(join(tmpdir(), 'joulebench-diff-'));
  try {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_DIR: gitDir,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      HOME: gitDir,
    };
    const git = (args: string[], workTree: string) =>
      execFileSync('git', ['-c', 'core.autocrlf=false', '-c', 'core.quotePath=false', `--work-tree=${workTree}`, ...args], {
        cwd: workTree,
        env,
        maxBuffer: 1 << 30,
        stdio: ['ignore', 'pipe', 'pipe'],
      }).toString();
    git(['init', '-q'], beforeDir);
    git(['add', '-A', '--', '.'], beforeDir);
    const base = git(['write-tree'], beforeDir).trim();
    git(['add', '-A', '--', '.'], afterDir);
    const skip = exclude.map((p) => `:(exclude,literal)${p}`);
    return git(['diff', '--cached', '--binary', '--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', base, '--', '.', ...skip], afterDir);
  } finally {
    rmSync(gitDir, { recursive: true, force: true });
  }
}
