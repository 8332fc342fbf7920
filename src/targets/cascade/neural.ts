import type { AnswerRequest, Stage, StageResult, Target } from '../../core/types.js';

/** The backend's Answer figures a cascade's answer carries as its own (through the stage's `meta`). */
export const PASSED_ON = ['ttft_ms', 'tpot_ms', 'cost_usd', 'attempts', 'retry_overhead_ms'] as const;

/** Stage 4: delegates to any Target; its energy is what the backend reports, `null` (never 0) when none. */
export class NeuralStage implements Stage {
  readonly id = 'neural';
  constructor(readonly backend: Target) {}

  async tryAnswer(prompt: string, req: AnswerRequest): Promise<StageResult> {
    const a = await this.backend.answer({ ...req, prompt });
    const j = a.energy?.joules;
    const out: StageResult = { text: a.text, energy_uj: j === null || j === undefined ? null : Math.round(j * 1e6) };
    if (a.usage) out.usage = a.usage;
    const meta: Record<string, unknown> = { backend: this.backend.id };
    for (const k of PASSED_ON) if (a[k] !== undefined) meta[k] = a[k];

    // The backend's own counters (a local model's `llamacpp` timings) travel on to the case's results line.
    if (a.meta !== undefined) meta.answer_meta = a.meta;
    out.meta = meta;
    return out;
  }

  describe(): Record<string, unknown> {
    return { stage: 'neural', backend: this.backend.describe() };
  }
}
