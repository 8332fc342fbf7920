import type { Answer, AnswerRequest, Energy, RecordedAnswer, Stage, StageResult, Target, Usage } from '../../core/types.js';

/** A stage that wants to see answers produced by later stages (the cache). */
interface ObservingStage extends Stage {
  observe(prompt: string, text: string, stageId: string): void;
}

function observes(s: Stage): s is ObservingStage {
  return typeof (s as Partial<ObservingStage>).observe === 'function';
}

/** A stage whose state changes when it answers (the cache's LRU recency). */
interface ReplayingStage extends Stage {
  replayHit(prompt: string): void;
}

function replays(s: Stage): s is ReplayingStage {
  return typeof (s as Partial<ReplayingStage>).replayHit === 'function';
}

/**
 * Tries stages in order; the first that answers resolves the case. Every stage tried reports its own
 * modelled energy, and the case's energy is their sum (source `model`), or `null` if any part is
 * unknown. Earlier stages that observe (the cache) are shown the answer afterwards.
 */
export class Cascade implements Target {
  readonly kind = 'cascade';
  constructor(
    readonly id: string,
    readonly stages: readonly Stage[],
  ) {
    if (stages.length === 0) throw new RangeError('a cascade needs at least one stage');
  }

  async answer(req: AnswerRequest): Promise<Answer> {
    const trace: NonNullable<Answer['trace']> = [];
    let total_uj: number | null = 0;
    for (let i = 0; i < this.stages.length; i++) {
      const stage = this.stages[i]!;
      const maybe = stage.tryAnswer(req.prompt, req);
      // Only await real promises: the in-memory stages are synchronous and a microtask per stage shows in the benchmark.
      const r: StageResult = maybe instanceof Promise ? await maybe : maybe;
      const hit = r.text !== null;
      trace.push({ stage: stage.id, hit, energy_uj: r.energy_uj });
      total_uj = total_uj === null || r.energy_uj === null ? null : total_uj + r.energy_uj;
      if (!hit) continue;
      for (let j = 0; j < i; j++) {
        const earlier = this.stages[j]!;
        if (observes(earlier)) earlier.observe(req.prompt, r.text!, stage.id);
      }
      const answer: Answer = {
        text: r.text!,
        stage: stage.id,
        trace,
        energy: energyOf(total_uj),
      };
      if (r.usage) answer.usage = r.usage as Usage;
      if (!('backend' in stage)) {
        // Answered in-process by a store: no model ran, so no tokens and no billed call — known zeros,
        // which keep the run's token and $ totals honest when the neural backend is a priced endpoint.
        answer.usage = { prompt_tokens: 0, completion_tokens: 0 };
        answer.cost_usd = 0;
      }
      if (r.meta) {
        const m = r.meta;
        if (typeof m.ttft_ms === 'number') answer.ttft_ms = m.ttft_ms;
        if (typeof m.tpot_ms === 'number') answer.tpot_ms = m.tpot_ms;
        if (typeof m.cost_usd === 'number') answer.cost_usd = m.cost_usd;
        if (typeof m.attempts === 'number') answer.attempts = m.attempts;
        if (typeof m.retry_overhead_ms === 'number') answer.retry_overhead_ms = m.retry_overhead_ms;
      }
      return answer;
    }
    return { text: '', stage: 'none', trace, energy: energyOf(total_uj) };
  }

  /**
   * Replays the state effect of a recorded answer without running any stage: the resolving stage is
   * told it answered (cache recency) and earlier stages observe the answer (cache admission), exactly as
   * `answer` does. Replaying a run's results in order rebuilds the cache an uninterrupted run would hold.
   */
  restore(req: AnswerRequest, recorded: RecordedAnswer): void {
    if (recorded.error !== null || recorded.response === null || recorded.stage === null) return;
    const i = this.stages.findIndex((s) => s.id === recorded.stage);
    if (i < 0) return;
    const resolver = this.stages[i]!;
    if (replays(resolver)) resolver.replayHit(req.prompt);
    for (let j = 0; j < i; j++) {
      const earlier = this.stages[j]!;
      if (observes(earlier)) earlier.observe(req.prompt, recorded.response, resolver.id);
    }
  }

  describe(): Record<string, unknown> {
    return { kind: 'cascade', id: this.id, stages: this.stages.map((s) => s.describe()) };
  }

  async close(): Promise<void> {
    for (const s of this.stages) {
      const backend = (s as { backend?: Target }).backend;
      if (backend?.close) await backend.close();
    }
  }
}

/** The cascade's total: modelled joules, or unknown (`none`) when any stage tried could not say. */
function energyOf(total_uj: number | null): Energy {
  return total_uj === null ? { joules: null, source: 'none' } : { joules: total_uj / 1e6, source: 'model' };
}
