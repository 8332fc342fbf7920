import { execFileSync } from 'node:child_process';
import { copyTree } from '../workdir.js';
import { inProcessOutcome, type Solver } from './solver.js';

/** Applies the task's known-good fix — its reference/ files, or its patch (SWE-bench `patch`): the ceiling every valid task must reach. */
export function referenceSolver(): Solver {
  return {
    id: 'reference',
    kind: 'reference',
    async solve(ctx) {
      if (ctx.task.reference_patch) {
        applyPatch(ctx.workdir, ctx.task.reference_patch);
      } else if (ctx.task.reference_dir) {
        copyTree(ctx.task.reference_dir, ctx.workdir);
      } else {
        return { ...inProcessOutcome(), exit_code: 1, error: 'the task has no reference fix' };
      }
      return inProcessOutcome();
    },
    describe: () => ({ kind: 'reference', note: "copies the task's reference/ files over the workdir, or applies its patch with git apply" }),
  };
}

/** Applies a unified diff in `dir` with `git apply` (works in and out of a git repository). */
export function applyPatch(dir: string, patch: string): void {
  execFileSync('git', ['apply', '--whitespace=nowarn', '-'], { cwd: dir, input: patch, stdio: ['pipe', 'ignore', 'pipe'] });
}
