import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The server: answers every chat request at once, and reports its own CPU time when asked over IPC. */
const SERVER = `
const http = require('node:http');
const plain = JSON.stringify({ id: 'x', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'B' }, finish_reason: 'stop' }], usage: { prompt_tokens: 50, completion_tokens: 1, total_tokens: 51 } });
const chunk = (o) => 'data: ' + JSON.stringify(o) + '\\n\\n';
const stream = chunk({ id: 'x', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'B' } }] })
  + chunk({ id: 'x', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })
  + chunk({ id: 'x', object: 'chat.completion.chunk', model: 'm', choices: [], usage: { prompt_tokens: 50, completion_tokens: 1, total_tokens: 51 } }) + 'data: [DONE]\\n\\n';
const s = http.createServer((req, res) => {
  let b = ''; req.on('data', (d) => (b += d)); req.on('end', () => {
    if (b.includes('"stream":true')) { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.end(stream); }
    else { res.writeHead(200, { 'content-type': 'application/json' }); res.end(plain); }
  });
});
s.keepAliveTimeout = 60000;
process.on('message', (m) => { if (m === 'cpu') { const c = process.cpuUsage(); process.send({ cpu_us: c.user + c.system }); } });
s.listen(0, '127.0.0.1', () => process.send({ port: s.address().port }));
`;

/** The minimal OpenAI-compatible server the HTTP benchmarks measure against, in a child process of its own. */
export interface MinimalServer {
  /** `http://127.0.0.1:PORT/v1` */
  base: string;
  /** The server process's CPU time so far (user + system), µs. */
  cpu_us(): Promise<number>;
  close(): void;
}

export async function startMinimalServer(): Promise<MinimalServer> {
  const dir = mkdtempSync(join(tmpdir(), 'jb-bench-server-'));
  const file = join(dir, 'server.cjs');
  writeFileSync(file, SERVER);
  const child = fork(file, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  let onMessage: ((m: { port?: number; cpu_us?: number }) => void) | null = null;
  child.on('message', (m) => onMessage?.(m as { port?: number; cpu_us?: number }));
  const ask = (): Promise<{ port?: number; cpu_us?: number }> => new Promise((ok) => (onMessage = ok));
  const port = (await ask()).port!;
  return {
    base: `http://127.0.0.1:${port}/v1`,
    async cpu_us() {
      const p = ask();
      child.send('cpu');
      return (await p).cpu_us!;
    },
    close() {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
