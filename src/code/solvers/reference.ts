import { copyTree } from '../workdir.js';
import { inProcessOutcome, type Solver } from './solver.js';

/** Applies the task's reference/ fix: the ceiling every valid task must reach. */
export function referenceSolver(): Solver {
  return {
    id: 'reference',
    kind: 'reference',
    async solve(ctx) {
      copyTree(ctx.task.reference_dir, ctx.workdir);
      return inProcessOutcome();
    },
    describe: () => ({ kind: 'reference', note: "copies the task's reference/ files over the workdir" }),
  };
}
