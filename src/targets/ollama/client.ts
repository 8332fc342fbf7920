import { performance } from 'node:perf_hooks';
import type { Dispatcher, RequestInit, Response } from 'undici';
import { JoulebenchError } from '../../core/errors.js';
import { assertHostAllowed } from '../openai/guard.js';
import { redactQuery } from '../openai/redact.js';
import { checkEndpoint } from '../openai/endpoint.js';
import { usageProblem } from '../usage.js';

/** undici and the targets' dispatcher, loaded at the first request: a command that sends none never loads them (~20 MB). */
let http: Promise<{ fetch: typeof import('undici').fetch; createDispatcher: typeof import('../dispatcher.js').createDispatcher }> | null = null;
const loadHttp = () => (http ??= Promise.all([import('undici'), import('../dispatcher.js')]).then(([u, d]) => ({ fetch: u.fetch, createDispatcher: d.createDispatcher })));

/** Ollama's default address. */
export const DEFAULT_OLLAMA_URL = 'http://127.0.0.1:11434';

/** The runner options joulebench passes through to Ollama (`options` in the request body). */
export type OllamaOptions = { [K in 'num_thread' | 'num_ctx' | 'seed' | 'temperature' | 'num_predict']?: number };

/** Our name of each of Ollama's timings in its final chunk, and Ollama's (durations in nanoseconds, as Ollama reports them). */
const TIMINGS = {
  load_duration_ns: 'load_duration',
  prompt_eval_count: 'prompt_eval_count',
  prompt_eval_duration_ns: 'prompt_eval_duration',
  eval_count: 'eval_count',
  eval_duration_ns: 'eval_duration',
  total_duration_ns: 'total_duration',
} as const;

/** Ollama's own timings from the final chunk; `null` when absent. */
export type OllamaTimings = Record<keyof typeof TIMINGS, number | null>;

/** One streamed request, timed on the client. */
export interface OllamaStreamResult {
  text: string;
  timings: OllamaTimings;
  /** Request sent to first non-empty content chunk, ms (client clock); `null` when no content came. */
  ttft_ms: number | null;
  /** Request sent to the final chunk, ms (client clock). */
  e2e_ms: number;
  done_reason: string | null;
}

/** One entry of `/api/ps`, as Ollama sends it (`expires_at` is local time with an offset). */
export interface OllamaPsModel {
  name: string;
  model: string;
  size: number | null;
  size_vram: number | null;
  expires_at: string | null;
}

/** The parameter count of a model and where it was read. */
type OllamaParams = { parameter_count: number | null; source: 'model_info.general.parameter_count' | 'details.parameter_size' | 'unknown' };

/** A client for Ollama's native API over undici (not the `ollama` package: fields exactly as sent, first-chunk timing). */
export class OllamaClient {
  readonly baseUrl: string;
  constructor(
    baseUrl: string = DEFAULT_OLLAMA_URL,
    private readonly timeoutMs = 600_000,
  ) {
    checkEndpoint(baseUrl, 'base URL');
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.shownUrl = redactQuery(this.baseUrl);
  }
  /** The base URL as messages show it: credential-shaped query parameters redacted. */
  private readonly shownUrl: string;
  private dispatcher: Dispatcher | null = null;

  /** Streams `/api/chat` or `/api/generate` (NDJSON) and returns the text, Ollama's timings and client TTFT. */
  async stream(path: '/api/chat' | '/api/generate', body: Record<string, unknown>, signal?: AbortSignal): Promise<OllamaStreamResult> {
    const t0 = performance.now();
    const res = await this.request(path, { method: 'POST', body: JSON.stringify({ ...body, stream: true }) }, signal);
    if (!res.body) throw new JoulebenchError('E_TARGET', `ollama ${this.shownUrl}${path}: empty response body`);
    let text = '';
    let ttft_ms: number | null = null;
    let final: Record<string, unknown> | null = null;
    let buffered = '';
    const decoder = new TextDecoder();
    const onLine = (line: string): void => {
      if (line.trim() === '') return;
      let chunk: Record<string, unknown>;
      try {
        chunk = JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new JoulebenchError('E_TARGET', `ollama ${this.shownUrl}${path}: malformed NDJSON line: ${line.slice(0, 80)}`);
      }
      if (typeof chunk.error === 'string') throw new JoulebenchError('E_TARGET', `ollama ${this.shownUrl}${path}: ${chunk.error}`);
      const piece = contentOf(chunk);
      if (piece !== '') {
        if (ttft_ms === null) ttft_ms = performance.now() - t0;
        text += piece;
      }
      if (chunk.done === true) final = chunk;
    };
    for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
      const lines = (buffered + decoder.decode(bytes, { stream: true })).split('\n');
      buffered = lines.pop()!;
      lines.forEach(onLine);
    }
    onLine(buffered + decoder.decode());
    const e2e_ms = performance.now() - t0;
    if (final === null) throw new JoulebenchError('E_TARGET', `ollama ${this.shownUrl}${path}: stream ended without a done chunk`);
    const f: Record<string, unknown> = final;
    // Token counts that cannot be counts fail the request rather than enter rates, tokens or dollars.
    const num_predict = (body.options as OllamaOptions | undefined)?.num_predict;
    const problem = usageProblem([
      { field: 'prompt_eval_count', value: f.prompt_eval_count },
      // num_predict -1 (or absent) is Ollama's "no limit": only a positive cap bounds eval_count.
      { field: 'eval_count', value: f.eval_count, ...(num_predict !== undefined && num_predict > 0 ? { cap: num_predict } : {}) },
    ]);
    if (problem !== null) throw new JoulebenchError('E_TARGET', `ollama ${this.shownUrl}${path}: ${problem}`);
    const timings = Object.fromEntries(Object.entries(TIMINGS).map(([ours, theirs]) => [ours, num(f[theirs])])) as OllamaTimings;
    return {
      text,
      timings,
      ttft_ms,
      e2e_ms,
      done_reason: typeof f.done_reason === 'string' ? f.done_reason : null,
    };
  }

  /** `/api/ps`: the models loaded now, fields as sent. */
  async ps(): Promise<OllamaPsModel[]> {
    const body = (await this.json('/api/ps', { method: 'GET' })) as { models?: unknown };
    const models = Array.isArray(body.models) ? body.models : [];
    return models.map((m: Record<string, unknown>) => ({
      name: String(m.name ?? m.model ?? ''),
      model: String(m.model ?? m.name ?? ''),
      size: num(m.size),
      size_vram: num(m.size_vram),
      expires_at: typeof m.expires_at === 'string' ? m.expires_at : null,
    }));
  }

  /** `/api/show`: the model's parameter count (model_info first, then the rounded `details.parameter_size`). */
  async show(model: string): Promise<OllamaParams> {
    const body = (await this.json('/api/show', { method: 'POST', body: JSON.stringify({ model }) })) as {
      model_info?: Record<string, unknown>;
      details?: { parameter_size?: unknown };
    };
    const exact = num(body.model_info?.['general.parameter_count']);
    if (exact !== null && exact > 0) return { parameter_count: exact, source: 'model_info.general.parameter_count' };
    const parsed = parseParameterSize(body.details?.parameter_size);
    if (parsed !== null) return { parameter_count: parsed, source: 'details.parameter_size' };
    return { parameter_count: null, source: 'unknown' };
  }

  /** `/api/version`; `null` when the server does not say. */
  async version(): Promise<string | null> {
    const body = (await this.json('/api/version', { method: 'GET' })) as { version?: unknown };
    return typeof body.version === 'string' ? body.version : null;
  }

  /** Asks Ollama to unload the model now (`keep_alive: 0` with no prompt). */
  async unload(model: string): Promise<void> {
    await this.json('/api/generate', { method: 'POST', body: JSON.stringify({ model, keep_alive: 0, stream: false }) });
  }

  private async json(path: string, init: RequestInit): Promise<unknown> {
    const res = await this.request(path, init);
    const text = await res.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new JoulebenchError('E_TARGET', `ollama ${this.shownUrl}${path}: response is not JSON: ${text.slice(0, 80)}`);
    }
  }

  private async request(path: string, init: RequestInit, signal?: AbortSignal): Promise<Response> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const sig = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let res: Response;
    try {
      // Through a proxy the proxy resolves the name, out of reach of the dispatcher's lookup hook: checked here first.
      await assertHostAllowed(new URL(this.baseUrl).hostname);
    } catch (e) {
      throw new JoulebenchError('E_TARGET', `ollama ${this.shownUrl}${path}: ${(e as Error).message}`);
    }
    try {
      const { fetch, createDispatcher } = await loadHttp();
      res = await fetch(this.baseUrl + path, { ...init, headers: { 'content-type': 'application/json' }, signal: sig, dispatcher: (this.dispatcher ??= createDispatcher()) });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const why = timeout.aborted ? `no answer within ${this.timeoutMs} ms` : (cause?.code ?? cause?.message ?? (e as Error).message);
      throw new JoulebenchError('E_TARGET', `ollama ${this.shownUrl}${path}: cannot reach the server (${why}); is \`ollama serve\` running?`, { cause: e });
    }
    if (!res.ok) {
      const detail = await res.text().catch(() => '');
      let message = detail.slice(0, 200);
      try {
        const j = JSON.parse(detail) as { error?: unknown };
        if (typeof j.error === 'string') message = j.error;
      } catch {
        // not JSON: keep the text
      }
      const err = new JoulebenchError('E_TARGET', `ollama ${this.shownUrl}${path}: HTTP ${res.status}${message ? `: ${message.split('\n')[0]}` : ''}`);
      throw Object.assign(err, { status: res.status });
    }
    return res;
  }
}

function contentOf(chunk: Record<string, unknown>): string {
  if (typeof chunk.response === 'string') return chunk.response;
  const msg = chunk.message as { content?: unknown } | undefined;
  return typeof msg?.content === 'string' ? msg.content : '';
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** "8.0B" → 8e9, "270M" → 2.7e8; `null` when it cannot be read. */
export function parseParameterSize(v: unknown): number | null {
  if (typeof v !== 'string') return null;
  const m = /^\s*([\d.]+)\s*([KMBT])\s*$/i.exec(v);
  if (!m) return null;
  const scale = { K: 1e3, M: 1e6, B: 1e9, T: 1e12 }[m[2]!.toUpperCase() as 'K' | 'M' | 'B' | 'T'];
  const n = Number(m[1]) * scale;
  return Number.isFinite(n) && n > 0 ? n : null;
}
