import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { listenOnLoopback } from './fake-openai.js';

/** How the streaming server answers one prompt. */
export interface StreamPlan {
  /** Request received → first content chunk, ms. */
  ttft_ms: number;
  /** Gap between consecutive content chunks, ms. */
  tpot_ms: number;
  /** Content chunks (one token each); the first carries the answer word. */
  tokens: number;
  /** Reasoning chunks sent before the content, `reasoning_gap_ms` apart, the first at `reasoning_first_ms`. */
  reasoning?: { chunks: number; first_ms: number; gap_ms: number };
  /** The answer word (the first content token). */
  answer: string;
  /** Send `usage` in the final chunk (default true). */
  usage?: boolean;
  /**
   * Hold the content back until `ready` settles (the test's client has seen the reasoning), then at
   * least `gap_ms` more, whatever the timers did: so a reasoning chunk and the first content chunk can
   * never arrive together, however late the server's timers fire on a loaded machine. The content
   * keeps its spacing; `ready` not settled within 10 s sends it anyway (the test then fails, never hangs).
   */
  contentAfter?: { ready: Promise<unknown>; gap_ms: number };
  /** Answer with this HTTP error status instead of a stream. */
  status?: number;
}

export interface LoadServer {
  url: string;
  /**
   * Requests received, in order: the prompt, when it arrived, and when each token chunk was really
   * written (`performance.now()`, the same clock as an in-process client): the ground truth a
   * client's timings are checked against on a machine whose timers run late.
   */
  seen: { prompt: string; messages: { role: string; content: string }[]; at_ms: number; writes: { kind: 'content' | 'reasoning'; at_ms: number }[] }[];
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible streaming server on 127.0.0.1 with known timing: each chunk is sent at its
 * absolute planned time after the request arrived (no drift accumulates across tokens).
 */
export async function startLoadServer(plan: (prompt: string) => StreamPlan): Promise<LoadServer> {
  const seen: LoadServer['seen'] = [];
  const server = http.createServer((req, res) => {
    const t0 = performance.now();
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (raw += d));
    req.on('end', () => {
      const body = JSON.parse(raw) as { messages: { role: string; content: string }[]; model: string };
      const prompt = body.messages.at(-1)?.content ?? '';
      const writes: LoadServer['seen'][number]['writes'] = [];
      seen.push({ prompt, messages: body.messages, at_ms: t0, writes });
      const p = plan(prompt);
      if (p.status !== undefined) return void res.writeHead(p.status, { 'content-type': 'application/json' }).end('{"error":{"message":"refused"}}');
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] })}\n\n`);
      const events: { at: number; data: string; kind?: 'content' | 'reasoning' }[] = [];
      const r = p.reasoning;
      for (let i = 0; r && i < r.chunks; i++) {
        events.push({ at: r.first_ms + i * r.gap_ms, kind: 'reasoning', data: JSON.stringify({ choices: [{ index: 0, delta: { reasoning_content: `think${i} `, content: null } }] }) });
      }
      for (let i = 0; i < p.tokens; i++) {
        const piece = i === 0 ? p.answer : ' .';
        events.push({ at: p.ttft_ms + i * p.tpot_ms, kind: 'content', data: JSON.stringify({ choices: [{ index: 0, delta: { content: piece } }] }) });
      }
      const last = events.at(-1)?.at ?? 0;
      events.push({ at: last, data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) });
      if (p.usage !== false) {
        events.push({ at: last, data: JSON.stringify({ choices: [], usage: { prompt_tokens: 7, completion_tokens: p.tokens + (r?.chunks ?? 0) } }) });
      }
      events.push({ at: last, data: '[DONE]' });
      let k = 0;
      let held = p.contentAfter;
      const tick = (): void => {
        // The client went away (it gave up, or the test closed it): nothing more to send.
        if (res.destroyed) return;
        const now = performance.now() - t0;
        while (k < events.length && events[k]!.at <= now) {
          if (held && events[k]!.kind === 'content') return void release(held);
          const e = events[k++]!;
          res.write(`data: ${e.data}\n\n`);
          if (e.kind) writes.push({ kind: e.kind, at_ms: performance.now() });
        }
        if (k === events.length) return void res.end();
        const wait = events[k]!.at - (performance.now() - t0);
        if (wait > 2) setTimeout(tick, wait - 1);
        else setImmediate(tick);
      };
      // The rest of the stream moves later, so that it starts `gap_ms` after `ready` settled.
      const release = (h: NonNullable<StreamPlan['contentAfter']>): void => {
        held = undefined;
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise((resolve) => (timer = setTimeout(resolve, 10_000)));
        void Promise.race([h.ready, deadline]).then(() => {
          clearTimeout(timer);
          const shift = Math.max(0, performance.now() - t0 + h.gap_ms - events[k]!.at);
          for (let j = k; j < events.length; j++) events[j]!.at += shift;
          tick();
        });
      };
      tick();
    });
  });
  return { seen, ...(await listenOnLoopback(server)) };
}
