import type { Answer, AnswerRequest, Energy, RecordedAnswer, Stage, StageResult, Target, Usage } from '../../core/types.js';
import { PASSED_ON } from './neural.js';

/** A stage's optional hooks: `observe` sees answers of later stages (the cache), `replayHit` replays a hit's LRU recency. */
type HookedStage = Stage & {
  observe?(prompt: string, text: string, stageId: string): void;
  replayHit?(prompt: string): void;
  backend?: Target;
};

/** Tries stages in order until one answers; energy is the sum over the stages tried, `null` if any is unknown. */
export class Cascade implements Target {
  readonly kind = 'cascade';
  constructor(
    readonly id: string,
    readonly stages: readonly HookedStage[],
    readonly deterministic = false,
  ) {
    if (stages.length === 0) throw new RangeError('a cascade needs at least one stage');
  }

  /** Synchronous while every stage tried is (the in-memory stores); the first promise makes the rest asynchronous. */
  answer(req: AnswerRequest): Answer | Promise<Answer> {
    const trace: Trace = [];
    for (let i = 0; i < this.stages.length; i++) {
      const maybe = this.stages[i]!.tryAnswer(req.prompt, req);
      if (maybe instanceof Promise) return this.continueAsync(req, trace, i, maybe);
      const answer = this.step(req, trace, i, maybe);
      if (answer) return answer;
    }
    return unanswered(trace);
  }

  private async continueAsync(req: AnswerRequest, trace: Trace, from: number, pending: Promise<StageResult>): Promise<Answer> {
    for (let i = from; i < this.stages.length; i++) {
      const maybe = i === from ? pending : this.stages[i]!.tryAnswer(req.prompt, req);
      const answer = this.step(req, trace, i, maybe instanceof Promise ? await maybe : maybe);
      if (answer) return answer;
    }
    return unanswered(trace);
  }

  /** Records stage `i`'s attempt; on a hit, shows the answer to earlier stages and returns it. */
  private step(req: AnswerRequest, trace: Trace, i: number, r: StageResult): Answer | null {
    const stage = this.stages[i]!;
    const hit = r.text !== null;
    trace.push({ stage: stage.id, hit, energy_uj: r.energy_uj });
    if (!hit) return null;
    for (let j = 0; j < i; j++) this.stages[j]!.observe?.(req.prompt, r.text!, stage.id);
    // A store's answer: no model ran, so known zero tokens and $0 (one literal: no extra allocation a case).
    const answer: Answer =
      'backend' in stage
        ? { text: r.text!, stage: stage.id, trace, energy: energyOf(trace) }
        : { text: r.text!, stage: stage.id, trace, energy: energyOf(trace), usage: NO_TOKENS, cost_usd: 0 };
    if (r.usage && 'backend' in stage) answer.usage = r.usage as Usage;
    if (r.meta) {
      const m = r.meta;
      for (const k of PASSED_ON) if (typeof m[k] === 'number') answer[k] = m[k];

      const own = m.answer_meta;
      if (own !== null && typeof own === 'object' && !Array.isArray(own)) answer.meta = own as Record<string, unknown>;
    }
    return answer;
  }

  /** Replays a recorded answer's state effect (cache recency and admission) without running any stage. */
  restore(req: AnswerRequest, recorded: RecordedAnswer): void {
    if (recorded.error !== null || recorded.response === null || recorded.stage === null) return;
    const i = this.stages.findIndex((s) => s.id === recorded.stage);
    if (i < 0) return;
    this.stages[i]!.replayHit?.(req.prompt);
    for (let j = 0; j < i; j++) this.stages[j]!.observe?.(req.prompt, recorded.response, recorded.stage);
  }

  describe(): Record<string, unknown> {
    // No conversation state: a multi-turn case arrives as one prompt joined with `Follow-up:` lines.
    return { kind: 'cascade', id: this.id, multi_turn: 'follow-up', stages: this.stages.map((s) => s.describe()) };
  }

  warnings(): string[] {
    return this.stages.flatMap((s) => s.backend?.warnings?.() ?? []);
  }

  async close(): Promise<void> {
    for (const s of this.stages) await s.backend?.close?.();
  }
}

/** What each stage tried did, in order (the Answer's trace). */
type Trace = NonNullable<Answer['trace']>;

/** A store's answer used no model: known zero tokens (shared, so frozen). */
const NO_TOKENS: Usage = Object.freeze({ prompt_tokens: 0, completion_tokens: 0 });

/** No stage answered. */
function unanswered(trace: Trace): Answer {
  return { text: '', stage: 'none', trace, energy: energyOf(trace) };
}

/** The cascade's total: modelled joules, or unknown (`none`) when any stage tried could not say. */
function energyOf(trace: Trace): Energy {
  let total_uj = 0;
  for (const { energy_uj } of trace) {
    if (energy_uj === null) return { joules: null, source: 'none' };
    total_uj += energy_uj;
  }
  return { joules: total_uj / 1e6, source: 'model' };
}
