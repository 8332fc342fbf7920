import type { Answer, Case, ChatMessage, Target } from '../core/types.js';
import type { Meter } from '../meters/meter.js';
import { judgementKey, type CachedJudgement, type JudgementCache } from './cache.js';
import { BUILTIN_PROMPTS, promptSetHash, type PromptSet } from './prompt-set.js';
import { promptHash, type JudgeMode } from './prompts.js';
import { parseChoice, parseRating } from './verdict.js';

/** A judgement and whether it came from the cache (nothing was asked, nothing spent now). */
export interface JudgeOutcome {
  judgement: CachedJudgement;
  cached: boolean;
}

export interface JudgeOptions {
  /** The judge: any target (its spec is the user's `judge:` block). */
  target: Target;
  mode: JudgeMode;
  /** FastChat-form prompts by name, or joulebench's own (the default). */
  prompts?: PromptSet;
  cache: JudgementCache;
  /** Opened around each judge request when it opens windows; otherwise the judge's own figure (or none). */
  meter?: Meter;
  signal?: AbortSignal;
}

/** The pseudo-case a judge request is filed under (a judge has no suite of its own). */
const JUDGE_CASE: Case = Object.freeze({ id: 'judge', expected: null, dataset: 'judge', weight: 1, tags: [] }) as Case;

/**
 * An LLM judge (MT-Bench verdicts, read as FastChat reads them): an unreadable reply is asked once more, then is a
 * `judge_error`, never a score; what asking cost is recorded apart from the system under test.
 */
export class Judge {
  readonly id: string;
  readonly prompt_hash: string;
  /** Requests actually sent (not cache hits). */
  requests = 0;

  constructor(private readonly o: JudgeOptions) {
    this.id = o.target.id;
    this.prompt_hash = this.prompts.entries ? promptSetHash(this.prompts, o.mode) : promptHash(o.mode);
  }

  get prompts(): PromptSet {
    return this.o.prompts ?? BUILTIN_PROMPTS;
  }

  get mode(): JudgeMode {
    return this.o.mode;
  }

  /** A 1–10 rating (`want: rating`) or an A/B/C choice (`want: choice`) for these messages. */
  async ask(messages: ChatMessage[], want: 'rating' | 'choice'): Promise<JudgeOutcome> {
    const key = judgementKey(this.id, this.prompt_hash, messages);
    const hit = this.o.cache.get(key);
    if (hit) return { judgement: hit, cached: true };
    const j: CachedJudgement = {
      key,
      judge: this.id,
      prompt_hash: this.prompt_hash,
      text: null,
      rating: null,
      choice: null,
      error: null,
      requests: 0,
      joules: 0,
      energy_source: 'none',
      cost_usd: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
    };
    const sources = new Set<string>();
    for (let attempt = 1; attempt <= 2; attempt++) {
      j.requests++;
      this.requests++;
      let answer: Answer;
      const window = this.o.meter && !this.o.meter.usesTargetEnergy ? await this.o.meter.start() : null;
      try {
        answer = await this.o.target.answer(this.request(messages));
      } catch (e) {
        if (window) await window.stop();
        const err = e as { code?: unknown; message?: unknown };
        j.error = { code: 'judge_error', message: `judge request failed (${typeof err?.code === 'string' ? err.code : 'E_TARGET'}): ${String(err?.message ?? e).split('\n')[0]}` };
        j.joules = null;
        break;
      }
      // The meter's window when one was opened, else the judge's own figure (or none).
      const energy = window ? await window.stop() : answer.energy;
      const joules = energy?.joules ?? null;
      const source = joules === null ? 'none' : energy!.source;
      sources.add(source);
      j.joules = j.joules === null || joules === null ? null : j.joules + joules;
      j.cost_usd = j.cost_usd === null || answer.cost_usd == null ? null : j.cost_usd + answer.cost_usd;
      j.prompt_tokens = j.prompt_tokens === null || answer.usage?.prompt_tokens == null ? null : j.prompt_tokens + answer.usage.prompt_tokens;
      j.completion_tokens =
        j.completion_tokens === null || answer.usage?.completion_tokens == null ? null : j.completion_tokens + answer.usage.completion_tokens;
      j.text = answer.text;
      if (want === 'rating') j.rating = parseRating(answer.text);
      else j.choice = parseChoice(answer.text);
      if (j.rating !== null || j.choice !== null) break;
      if (attempt === 2) {
        const expected = want === 'rating' ? 'a rating from 1 to 10 as [[n]] or [n]' : 'one of [[A]], [[B]], [[C]]';
        j.error = { code: 'judge_error', message: `the judge's verdict could not be read twice (expected ${expected})` };
      }
    }
    j.energy_source = j.joules === null ? 'none' : sources.size === 1 ? [...sources][0]! : 'mixed';
    this.o.cache.put(j);
    return { judgement: j, cached: false };
  }

  private request(messages: ChatMessage[]) {
    const user = messages.filter((m) => m.role !== 'system').map((m) => m.content).join('\n\n');
    // A target that takes no conversation (a cascade, echo) gets the instructions and the material as one prompt.
    const prompt = this.o.target.conversational ? user : messages.map((m) => m.content).join('\n\n');
    const req: { prompt: string; case: Case; messages?: ChatMessage[]; signal?: AbortSignal } = { prompt, case: JUDGE_CASE };
    if (this.o.target.conversational) req.messages = messages;
    if (this.o.signal) req.signal = this.o.signal;
    return req;
  }
}
