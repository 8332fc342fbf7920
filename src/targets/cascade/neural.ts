import type { AnswerRequest, Stage, StageResult, Target } from '../../core/types.js';

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
    if (a.ttft_ms !== undefined) meta.ttft_ms = a.ttft_ms;
    if (a.cost_usd !== undefined) meta.cost_usd = a.cost_usd;
    if (a.attempts !== undefined) meta.attempts = a.attempts;
    if (a.retry_overhead_ms !== undefined) meta.retry_overhead_ms = a.retry_overhead_ms;
    if (a.tpot_ms !== undefined) meta.tpot_ms = a.tpot_ms;
    // The backend's own counters (a local model's `llamacpp` timings) travel on to the case's results line.
    if (a.meta !== undefined) meta.answer_meta = a.meta;
    out.meta = meta;
    return out;
  }

  describe(): Record<string, unknown> {
    return { stage: 'neural', backend: this.backend.describe() };
  }
}
