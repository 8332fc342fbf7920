import { apiEnergyModel, type ApiEnergyModel } from '../../energy-model/api-model.js';
import { round } from '../../core/stats.js';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Answer, AnswerRequest, Target } from '../../core/types.js';
import { backoffDelay_s, isRetryable, NO_RETRY, type RetryPolicy } from '../retry.js';
import { openaiCounts, openaiUsage, usagePartProblem, usageProblem } from '../usage.js';
import { costOf } from './cost.js';
import type { OpenAISpec } from './spec.js';
import { checkEndpoint } from './endpoint.js';
import { AttemptFailure, HttpPool, postChat, type ChatResult, type PostOptions } from './http.js';
import { redact, redactDeep, redactQuery, redactText } from './redact.js';

export { checkEndpoint };

/** Settings of an `openai` target: a spec's keys ({@link OpenAISpec}), with the key resolved (sent as a Bearer header when present). */
export type OpenAITargetOptions = Omit<OpenAISpec, 'endpoint' | 'model' | 'api_key'> & { endpoint: string; model: string; apiKey?: string };

/** A failure after every allowed attempt: what the runner records on the case. */
export class TargetFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly attempts: number,
    readonly retry_overhead_ms: number,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'TargetFailure';
  }
}

/** Any OpenAI-compatible chat-completions endpoint at temperature 0; failed attempts and backoff are `retry_overhead_ms`. */
export class OpenAITarget implements Target {
  readonly kind = 'openai';
  /** Multi-turn cases are asked turn by turn with the model's own earlier answers (MT-Bench). */
  readonly conversational = true;
  readonly id: string;
  private readonly url: URL;
  private readonly pool = new HttpPool();
  private stream: boolean;
  private readonly retry: RetryPolicy;
  private readonly timeout_ms: number;
  private readonly max_tokens: number;
  /** The body around its messages, serialized once; the bytes equal `JSON.stringify` of the body object. */
  private readonly bodyStart: string;
  private readonly bodyEnd: [plain: string, stream: string];
  private readonly bodyEndFor: (max_tokens: number) => [plain: string, stream: string];

  /** The model:api estimate for this model, or why there is none. */
  private readonly energyModel: ApiEnergyModel;
  constructor(
    private readonly o: OpenAITargetOptions,
    private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void> = abortableSleep,
  ) {
    const base = checkEndpoint(o.endpoint);
    // The path is extended, the query (e.g. a gateway's `?api-version=`) kept where it belongs.
    this.url = new URL(base.href);
    this.url.pathname = `${base.pathname.replace(/\/+$/, '')}/chat/completions`;
    this.id = `openai:${o.model}`;
    this.energyModel = apiEnergyModel(o.model, o.energy_model);
    this.stream = o.stream ?? true;
    this.retry = o.retry ?? NO_RETRY;
    this.timeout_ms = Math.round((o.request_timeout_s ?? 120) * 1000);
    this.max_tokens = o.max_tokens ?? 256;
    this.bodyStart = `{"model":${JSON.stringify(o.model)},"messages":`;
    this.bodyEndFor = (max_tokens) => {
      const end = `,"temperature":0,"max_tokens":${JSON.stringify(max_tokens)}${o.ignore_eos ? ',"ignore_eos":true' : ''}`;
      return [`${end}}`, `${end},"stream":true,"stream_options":{"include_usage":true}}`];
    };
    this.bodyEnd = this.bodyEndFor(this.max_tokens);
  }

  answer(req: AnswerRequest): Promise<Answer> {
    return this.attempts(req, null);
  }

  /** Builds and serializes the request now; the returned function sends it (load runs, `Target.prepare`). */
  prepare(req: AnswerRequest): () => Promise<Answer> {
    const prepared = this.post(req, this.stream);
    return () => this.attempts(req, prepared);
  }

  private async attempts(req: AnswerRequest, prepared: PostOptions | null): Promise<Answer> {
    const first = performance.now();
    let attempt = 0;
    for (;;) {
      attempt++;
      const started = attempt === 1 ? first : performance.now();
      try {
        const stream = this.stream;
        let r: ChatResult;
        try {
          // A prepared request (load runs) is sent as built while the streaming choice it was built for holds.
          r = await postChat(attempt === 1 && prepared !== null && prepared.stream === stream ? prepared : this.post(req, stream));
        } catch (e) {
          // A server that refuses `stream: true` (a 400/422 naming "stream") is asked again plainly, once.
          if (!(stream && this.stream && e instanceof AttemptFailure && (e.status === 400 || e.status === 422) && /stream/i.test(e.message))) throw e;
          this.stream = false;
          r = await postChat(this.post(req, false));
        }
        return this.toAnswer(r, attempt, started - first, req.case.max_tokens ?? this.max_tokens);
      } catch (e) {
        const f = e instanceof AttemptFailure ? e : new AttemptFailure('connection', String((e as Error)?.message ?? e));
        if (attempt >= this.retry.max_attempts || !isRetryable(f.kind, f.status) || req.signal?.aborted) {
          throw new TargetFailure(codeOf(f.kind), redact(f.message, this.o.apiKey), attempt, round(started - first, 3), f.status);
        }
        await this.sleep(backoffDelay_s(attempt, this.retry) * 1000, req.signal);
      }
    }
  }

  /** The request for `req`: `{model, messages, temperature: 0, max_tokens[, stream, stream_options]}`, serialized. */
  private post(req: AnswerRequest, stream: boolean): PostOptions {
    const messages =
      req.messages !== undefined
        ? JSON.stringify(req.messages)
        : typeof req.prompt === 'string'
          ? `[{"role":"user","content":${JSON.stringify(req.prompt)}}]`
          : JSON.stringify([{ role: 'user', content: req.prompt }]);
    const end = req.case.max_tokens === undefined ? this.bodyEnd : this.bodyEndFor(req.case.max_tokens);
    const payload = `${this.bodyStart}${messages}${end[stream ? 1 : 0]}`;
    const post: Parameters<typeof postChat>[0] = { url: this.url, payload, stream, timeout_ms: this.timeout_ms, pool: this.pool };
    // Set one by one, not spread from conditional objects: this is the hot path.
    if (this.o.max_reply_bytes !== undefined) post.max_reply_bytes = this.o.max_reply_bytes;
    if (this.o.apiKey) post.apiKey = this.o.apiKey;
    if (req.signal) post.signal = req.signal;
    if (req.onChunk) post.onChunk = req.onChunk;
    return post;
  }

  private toAnswer(r: ChatResult, attempts: number, overhead_ms: number, max_tokens: number): Answer {
    // A count that cannot be one (negative, fractional, far past max_tokens) fails the case, never becomes dollars.
    const usage = openaiUsage(r.usage);
    const problem = usageProblem(openaiCounts(r.usage, max_tokens)) ?? usagePartProblem(usage);
    if (problem !== null) throw new AttemptFailure('malformed', problem);
    const out = usage.completion_tokens;
    const tpot_ms = r.ttft_ms !== null && out !== null && out > 1 ? round((r.e2e_ms - r.ttft_ms) / (out - 1), 3) : null;
    // A 200 may echo the key (a proxy reflecting the Authorization header): it never reaches the results file.
    const answer: Answer = {
      text: redactText(r.text, this.o.apiKey),
      usage,
      ttft_ms: r.ttft_ms === null ? null : round(r.ttft_ms, 3),
      tpot_ms,
      cost_usd: costOf(usage, this.o.prices),
    };
    if (r.itl_ms !== null) answer.itl_ms = r.itl_ms.map((g) => round(g, 3));
    if (this.energyModel.known) answer.energy = this.energyModel.energy(out, r.e2e_ms);
    answer.attempts = attempts;
    answer.retry_overhead_ms = round(overhead_ms, 3);
    answer.meta = redactDeep({ e2e_ms: round(r.e2e_ms, 3), streamed: r.streamed }, this.o.apiKey);
    return answer;
  }

  describe(): Record<string, unknown> {
    return {
      kind: 'openai',
      endpoint: redactQuery(this.o.endpoint),
      model: this.o.model,
      credentials_ref: this.o.credentials_ref ?? null,
      max_tokens: this.max_tokens,
      ...(this.o.ignore_eos ? { ignore_eos: true } : {}),
      temperature: 0,
      multi_turn: 'conversation',
      stream: this.o.stream ?? true,
      request_timeout_s: this.timeout_ms / 1000,
      retry: this.o.retry ?? null,
      prices: this.o.prices ?? null,
      ...(this.o.max_reply_bytes !== undefined ? { max_reply_bytes: this.o.max_reply_bytes } : {}),
      // Only when configured: the config digest of runs without it stays as it was.
      ...(this.o.energy_model !== undefined
        ? { energy_model: this.energyModel.known ? this.energyModel.facts : { unknown: this.energyModel.reason } }
        : {}),
    };
  }

  async close(): Promise<void> {
    this.pool.destroy();
  }
}

/** The error code of an attempt's kind: `E_HTTP`, `E_TIMEOUT`, … and `E_FORBIDDEN_ADDRESS` for a metadata address. */
function codeOf(kind: AttemptFailure['kind']): string {
  return kind === 'forbidden' ? 'E_FORBIDDEN_ADDRESS' : `E_${kind.toUpperCase()}`;
}

/** Waits `ms`, or until `signal` aborts (then resolves early: the caller sees the abort itself). */
function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return sleep(ms, undefined, signal ? { signal } : {}).catch(() => undefined);
}
