import type { Answer, Target } from '../../core/types.js';

export interface EchoOptions {
  /** Modelled energy per inference, J. Seed 000 §4: 50 J — deliberately high, to show the cost spread. */
  energy_j?: number;
}

/** The default neural backend: answers with the prompt itself, at a modelled constant energy labelled `model`. */
export function createEchoTarget(opts: EchoOptions = {}): Target {
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
