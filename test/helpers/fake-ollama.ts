import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A model the fake server knows. */
export interface FakeModel {
  parameter_count: number;
  size?: number;
  /** Bytes reported as `size_vram` in `/api/ps`; 0 = CPU-only. */
  size_vram?: number;
  /** Omit `model_info.general.parameter_count` and report only `details.parameter_size`. */
  only_parameter_size?: string;
}

export interface FakeOllamaOptions {
  models: Record<string, FakeModel>;
  /** Real delay on first use (and on a reload after unload or a num_thread change), ms; reported as load_duration. */
  load_ms?: number;
  /** Real prefill delay per uncached prompt token, ms; reported as prompt_eval_duration. */
  prefill_ms_per_token?: number;
  /** prompt_eval_duration reported for a prompt already in the prefix cache, ns (near zero). */
  cached_prefill_ns?: number;
  /** Reported decode rate for a request: by thread count (null = default) and per-model call number. */
  decode_tok_s?: (num_thread: number | null, call: number, model: string) => number;
  /** `/api/ps` keeps listing an unloaded model for this many polls (Ollama unloads asynchronously). */
  unload_lag_polls?: number;
  /** The UTC offset of the "server machine" used in `expires_at`, e.g. "-07:00". */
  utc_offset?: string;
  version?: string;
  /** Called on every streamed generation (not unloads), 1-based. */
  onGeneration?: (n: number) => void;
  /** Awaited at the start of every generation, 1-based: work the "server" does while the request is open. */
  during?: (n: number) => Promise<void>;
  /** The reply text; default a few words. */
  reply?: (prompt: string) => string;
  /** Fields that replace the final chunk's own (e.g. an `eval_count` no real server would send). */
  final?: Record<string, unknown>;
}

interface Loaded {
  num_thread: number | null;
  cache: Set<string>;
  expires: Date;
  unloading_polls_left: number | null;
}

/** A request as the fake server saw it. */
export interface SeenRequest {
  method: string;
  path: string;
  body: Record<string, unknown> | null;
}

/**
 * An HTTP server on 127.0.0.1 that speaks Ollama's native API and behaves like Ollama where the counting
 * rules care: a load delay on first use, a prefix cache that makes a repeated prompt's
 * prompt_eval_duration near zero, `keep_alive: 0` unloading (listed in `/api/ps` for a poll or two
 * after), `expires_at` in local time with an offset, `/api/show` parameter counts, streaming NDJSON.
 */
export class FakeOllama {
  readonly seen: SeenRequest[] = [];
  readonly loaded = new Map<string, Loaded>();
  /** Every expires_at sent, raw, with the instant it stands for. */
  readonly expiresSent: { raw: string; instant_ms: number }[] = [];
  generations = 0;
  loads = 0;
  private readonly calls = new Map<string, number>();
  private server: Server | null = null;
  url = '';

  constructor(readonly opts: FakeOllamaOptions) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      req.socket.setNoDelay(true);
      this.handle(req, res).catch((e: unknown) => {
        res.statusCode = 500;
        res.end(JSON.stringify({ error: String(e) }));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
    const path = (req.url ?? '/').split('?')[0]!;
    this.seen.push({ method: req.method ?? 'GET', path, body });
    res.setHeader('content-type', 'application/json');
    if (path === '/api/version') return void res.end(JSON.stringify({ version: this.opts.version ?? '0.12.3' }));
    if (path === '/api/ps') return void res.end(JSON.stringify({ models: this.ps() }));
    const model = typeof body?.model === 'string' ? body.model : '';
    const info = this.opts.models[model];
    if (!info) {
      res.statusCode = 404;
      return void res.end(JSON.stringify({ error: `model '${model}' not found` }));
    }
    if (path === '/api/show') {
      return void res.end(
        JSON.stringify({
          details: { format: 'gguf', parameter_size: info.only_parameter_size ?? `${(info.parameter_count / 1e9).toFixed(1)}B` },
          model_info: info.only_parameter_size ? { 'general.architecture': 'llama' } : { 'general.architecture': 'llama', 'general.parameter_count': info.parameter_count },
        }),
      );
    }
    if (path !== '/api/generate' && path !== '/api/chat') {
      res.statusCode = 404;
      return void res.end(JSON.stringify({ error: 'not found' }));
    }
    const prompt =
      path === '/api/chat'
        ? String(((body?.messages as { content?: string }[] | undefined) ?? []).at(-1)?.content ?? '')
        : typeof body?.prompt === 'string'
          ? body.prompt
          : '';
    if (body?.keep_alive === 0 && prompt === '') {
      const l = this.loaded.get(model);
      if (l) l.unloading_polls_left = this.opts.unload_lag_polls ?? 1;
      return void res.end(JSON.stringify({ model, created_at: new Date().toISOString(), response: '', done: true, done_reason: 'unload' }));
    }
    await this.generate(res, path, model, prompt, (body?.options ?? {}) as Record<string, unknown>, body?.stream !== false);
  }

  private async generate(res: ServerResponse, path: string, model: string, prompt: string, options: Record<string, unknown>, stream: boolean): Promise<void> {
    this.generations++;
    this.opts.onGeneration?.(this.generations);
    await this.opts.during?.(this.generations);
    const call = (this.calls.get(model) ?? 0) + 1;
    this.calls.set(model, call);
    const t0 = process.hrtime.bigint();
    const num_thread = typeof options.num_thread === 'number' ? options.num_thread : null;
    let l = this.loaded.get(model);
    let load_ns = 0;
    if (!l || l.unloading_polls_left !== null || l.num_thread !== num_thread) {
      // First use, after an unload, or new runner options: load (again), with an empty prefix cache.
      const tl = process.hrtime.bigint();
      await sleep(this.opts.load_ms ?? 30);
      load_ns = Number(process.hrtime.bigint() - tl);
      this.loads++;
      l = { num_thread, cache: new Set(), expires: new Date(), unloading_polls_left: null };
      this.loaded.set(model, l);
    }
    l.expires = new Date(Date.now() + 5 * 60_000);
    const promptTokens = prompt.split(/\s+/).filter(Boolean).length;
    let prompt_eval_ns: number;
    if (l.cache.has(prompt)) {
      prompt_eval_ns = this.opts.cached_prefill_ns ?? 200_000;
    } else {
      const tp = process.hrtime.bigint();
      await sleep(promptTokens * (this.opts.prefill_ms_per_token ?? 0.1));
      prompt_eval_ns = Number(process.hrtime.bigint() - tp);
      l.cache.add(prompt);
    }
    const num_predict = typeof options.num_predict === 'number' ? options.num_predict : 8;
    const words = (this.opts.reply ? this.opts.reply(prompt) : 'the pump station trips because the motor overheats').split(/\s+/).filter(Boolean);
    const tokens = Array.from({ length: num_predict }, (_, i) => words[i % words.length]! + ' ');
    const rate = this.opts.decode_tok_s ? this.opts.decode_tok_s(num_thread, call, model) : 20;
    const eval_ns = Math.round((tokens.length / rate) * 1e9);
    const piece = (content: string, done: boolean): Record<string, unknown> =>
      path === '/api/chat'
        ? { model, created_at: new Date().toISOString(), message: { role: 'assistant', content }, done }
        : { model, created_at: new Date().toISOString(), response: content, done };
    const final = {
      ...piece('', true),
      done_reason: 'stop',
      total_duration: Number(process.hrtime.bigint() - t0) + eval_ns,
      load_duration: load_ns,
      prompt_eval_count: promptTokens,
      prompt_eval_duration: prompt_eval_ns,
      eval_count: tokens.length,
      eval_duration: eval_ns,
      ...this.opts.final,
    };
    if (!stream) {
      res.end(JSON.stringify({ ...final, ...piece(tokens.join(''), true) }));
      return;
    }
    res.setHeader('content-type', 'application/x-ndjson');
    for (const t of tokens) res.write(JSON.stringify(piece(t, false)) + '\n');
    res.end(JSON.stringify(final) + '\n');
  }

  private ps(): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (const [model, l] of this.loaded) {
      if (l.unloading_polls_left !== null) {
        if (l.unloading_polls_left <= 0) {
          this.loaded.delete(model);
          continue;
        }
        l.unloading_polls_left--;
      }
      const info = this.opts.models[model]!;
      const raw = localStamp(l.expires, this.opts.utc_offset ?? '-07:00');
      this.expiresSent.push({ raw, instant_ms: l.expires.getTime() });
      out.push({
        name: model,
        model,
        size: info.size ?? 5_000_000_000,
        digest: 'f'.repeat(64),
        details: { parameter_size: `${(info.parameter_count / 1e9).toFixed(1)}B` },
        expires_at: raw,
        size_vram: info.size_vram ?? 0,
      });
    }
    return out;
  }
}

/** A Go-style local timestamp: nanosecond fraction and a numeric offset, e.g. 2026-11-29T08:21:16.123456789-07:00. */
export function localStamp(d: Date, offset: string): string {
  const sign = offset.startsWith('-') ? -1 : 1;
  const [hh, mm] = offset.slice(1).split(':').map(Number) as [number, number];
  const local = new Date(d.getTime() + sign * (hh * 60 + mm) * 60_000).toISOString();
  return `${local.slice(0, 23)}456789${offset}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
