import type { Answer, Target } from '../../core/types.js';

/** The default neural backend: echoes the prompt at a modelled `energy_j` (seed 000 §4: 50 J, high to show the spread). */
export function createEchoTarget(opts: { energy_j?: number } = {}): Target {
  const energy_j = opts.energy_j ?? 50;
  return {
    id: 'echo',
    kind: 'echo',
    async answer(req): Promise<Answer> {
      // A local stand-in: nothing is billed ($0 is known); it counts no tokens (left unknown).
      return { text: req.prompt, energy: { joules: energy_j, source: 'model' }, cost_usd: 0 };
    },
    describe: () => ({ kind: 'echo', energy_j_per_inference: energy_j }),
  };
}
