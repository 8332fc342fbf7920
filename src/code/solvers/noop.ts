import { inProcessOutcome, type Solver } from './solver.js';

/** Changes nothing: the floor, proving the oracle rejects unfixed code. */
export function noopSolver(): Solver {
  return {
    id: 'noop',
    kind: 'noop',
    solve: async () => inProcessOutcome(),
    describe: () => ({ kind: 'noop', note: 'changes nothing' }),
  };
}
