import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { listenOnLoopback } from './fake-openai.js';

/** What the queue server saw of one request. */
export interface QueuedRequest {
  prompt: string;
  max_tokens: unknown;
  ignore_eos: unknown;
  /** The chat messages sent. */
  messages: { role: string; content: string }[];
  /** When the request arrived, and when its reply was written (`performance.now()` on the server). */
  at_ms: number;
  answered_ms: number | null;
}

export interface QueueServer {
  url: string;
  seen: QueuedRequest[];
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible streaming server on 127.0.0.1 that serves one request at a time, each for a fixed
 * `service_ms`: it saturates at 1000 / service_ms requests/s. Service ends are planned on the server's own
 * queue (a late timer delays one reply, not the next), then the reply streams at once: the content, one
 * chunk per token (`max_tokens` of them when `ignore_eos` is set, else `tokens`), and a usage chunk whose
 * `prompt_tokens` counts the space-separated words of every message.
 */
export async function startQueueServer(o: { service_ms: number; tokens: number }): Promise<QueueServer> {
  const seen: QueuedRequest[] = [];
  let freeAt = 0;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (raw += d));
    req.on('end', () => {
      const body = JSON.parse(raw) as { messages: { role: string; content: string }[]; max_tokens?: unknown; ignore_eos?: unknown };
      const prompt = body.messages.at(-1)?.content ?? '';
      const now = performance.now();
      const entry: QueuedRequest = { prompt, max_tokens: body.max_tokens, ignore_eos: body.ignore_eos, messages: body.messages, at_ms: now, answered_ms: null };
      seen.push(entry);
      const doneAt = Math.max(now, freeAt) + o.service_ms;
      freeAt = doneAt;
      const n = body.ignore_eos === true && typeof body.max_tokens === 'number' ? body.max_tokens : o.tokens;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      setTimeout(() => {
        if (res.destroyed) return;
        let out = '';
        for (let i = 0; i < n; i++) out += `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: i === 0 ? 'ok' : ' .' } }] })}\n\n`;
        out += `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`;
        const words = body.messages.reduce((k, m) => k + m.content.split(/\s+/).filter((w) => w !== '').length, 0);
        out += `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: words, completion_tokens: n } })}\n\ndata: [DONE]\n\n`;
        res.end(out);
        entry.answered_ms = performance.now();
      }, Math.max(0, doneAt - performance.now()));
    });
  });
  return { seen, ...(await listenOnLoopback(server)) };
}
