import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { AnswerRequest, Case } from '../../src/core/types.js';
import { redactDeep } from '../../src/targets/openai/redact.js';
import { OpenAITarget, type OpenAITargetOptions, type TargetFailure } from '../../src/targets/openai/target.js';
import { startFakeOpenAI, type FakeServer, type Reply } from '../helpers/fake-openai.js';
import { targetContract } from './contract.js';

const kase: Case = { id: 'q1', prompt: 'Which letter?', expected: 'B', dataset: 'd', weight: 1, tags: [] };
const req: AnswerRequest = { prompt: 'Which letter?', case: kase };
const usage = { prompt_tokens: 12, completion_tokens: 5 };
const servers: FakeServer[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

async function serve(reply: (n: number) => Reply): Promise<FakeServer> {
  const s = await startFakeOpenAI((_r, n) => reply(n));
  servers.push(s);
  return s;
}

/** A target whose backoff waits are recorded instead of slept, so retry tests are exact and fast. */
function target(url: string, extra: Partial<OpenAITargetOptions> = {}): { t: OpenAITarget; waits_ms: number[] } {
  const waits_ms: number[] = [];
  const t = new OpenAITarget({ endpoint: url, model: 'm', ...extra }, async (ms) => {
    waits_ms.push(ms);
  });
  return { t, waits_ms };
}

async function failure(p: Promise<unknown>): Promise<TargetFailure> {
  try {
    await p;
  } catch (e) {
    return e as TargetFailure;
  }
  assert.fail('expected the call to fail');
}

const retry3 = { max_attempts: 3, backoff_base_s: 0.2, backoff_max_s: 5 };

describe('openai target: answers', () => {
  test('streams: text, usage, TTFT, TPOT, cost; temperature 0 and max_tokens sent', async () => {
    const s = await serve(() => ({ kind: 'stream', text: 'The answer is B.', usage, chunkDelay_ms: 2 }));
    const { t } = target(s.url, { max_tokens: 7, prices: { input_usd_per_mtok: 1, output_usd_per_mtok: 2 } });
    const a = await t.answer(req);
    assert.equal(a.text, 'The answer is B.');
    assert.equal(a.stage, undefined, 'one model names no stage: the runner counts its answers neural (test/targets/stages.test.ts)');
    assert.deepEqual(a.usage, usage);
    assert.ok(a.ttft_ms !== null && a.ttft_ms! > 0, 'TTFT measured');
    const e2e = (a.meta as { e2e_ms: number }).e2e_ms;
    assert.ok(e2e >= a.ttft_ms!, 'e2e after first token');
    assert.ok(Math.abs(a.tpot_ms! - (e2e - a.ttft_ms!) / 4) < 0.01, 'TPOT = (e2e - TTFT) / (out - 1)');
    assert.equal(a.cost_usd, (12 * 1 + 5 * 2) / 1e6);
    assert.equal(a.attempts, 1);
    assert.equal(a.retry_overhead_ms, 0);
    const body = s.seen[0]!.body;
    assert.equal(s.seen[0]!.url, '/v1/chat/completions');
    assert.equal(body.temperature, 0);
    assert.equal(body.max_tokens, 7);
    assert.equal(body.stream, true);
    assert.equal(s.seen[0]!.headers.authorization, undefined, 'no Bearer header without a key');
    await t.close();
  });

  test('plain JSON reply (stream off): no TTFT, usage read', async () => {
    const s = await serve(() => ({ kind: 'plain', text: 'C', usage }));
    const { t } = target(s.url, { stream: false, apiKey: 'k-123' });
    const a = await t.answer(req);
    assert.equal(a.text, 'C');
    assert.equal(a.ttft_ms, null);
    assert.equal(a.tpot_ms, null);
    assert.deepEqual(a.usage, usage);
    assert.equal(s.seen[0]!.body.stream, undefined);
    assert.equal(s.seen[0]!.headers.authorization, 'Bearer k-123');
    await t.close();
  });

  test('usage absent: tokens and cost are null, never 0', async () => {
    const s = await serve((n) => (n === 0 ? { kind: 'stream', text: 'A' } : { kind: 'plain', text: 'A' }));
    const { t } = target(s.url, { prices: { input_usd_per_mtok: 1, output_usd_per_mtok: 1 } });
    const a = await t.answer(req);
    assert.deepEqual(a.usage, { prompt_tokens: null, completion_tokens: null });
    assert.equal(a.cost_usd, null);
    assert.equal(a.tpot_ms, null);
    await t.close();
  });

  test('a server that refuses streaming is asked again plainly, and stays plain', async () => {
    const s = await startFakeOpenAI((r) =>
      r.body.stream ? { kind: 'status', status: 400, body: JSON.stringify({ error: { message: 'stream is not supported' } }) } : { kind: 'plain', text: 'D', usage },
    );
    servers.push(s);
    const { t } = target(s.url);
    assert.equal((await t.answer(req)).text, 'D');
    assert.equal((await t.answer(req)).text, 'D');
    assert.deepEqual(s.seen.map((x) => Boolean(x.body.stream)), [true, false, false]);
    await t.close();
  });

  test('a server that ignores stream:true and answers JSON is read as plain', async () => {
    const s = await serve(() => ({ kind: 'plain', text: 'B', usage }));
    const { t } = target(s.url);
    const a = await t.answer(req);
    assert.equal(a.text, 'B');
    assert.equal(a.ttft_ms, null);
    await t.close();
  });
});

describe('openai target: a request prepared ahead (load runs)', () => {
  test('sends the same body and headers as answer() would; a retry builds its request again', async () => {
    const s = await serve((n): Reply => (n === 1 ? { kind: 'status', status: 503 } : { kind: 'stream', text: 'B', usage }));
    const { t, waits_ms } = target(s.url, { retry: retry3, apiKey: 'sk-test' });
    assert.equal((await t.answer(req)).text, 'B');
    // Prepared now, sent later: the first attempt fails (503) and the retry builds its request again.
    const send = t.prepare(req);
    const a = await send();
    assert.equal(a.text, 'B');
    assert.equal(a.attempts, 2);
    assert.equal(waits_ms.length, 1);
    assert.deepEqual(s.seen[1]!.body, s.seen[0]!.body);
    assert.deepEqual(s.seen[2]!.body, s.seen[0]!.body);
    assert.equal(s.seen[1]!.headers.authorization, 'Bearer sk-test');
    assert.equal(s.seen[1]!.headers['content-length'], String(Buffer.byteLength(JSON.stringify(s.seen[0]!.body))));
  });
});

describe('openai target: retry exactly as seed 003', () => {
  test('off by default: one attempt, even for a 503', async () => {
    const s = await serve(() => ({ kind: 'status', status: 503 }));
    const { t, waits_ms } = target(s.url);
    const e = await failure(t.answer(req));
    assert.equal(e.code, 'E_HTTP');
    assert.equal(e.status, 503);
    assert.equal(e.attempts, 1);
    assert.equal(s.seen.length, 1);
    assert.deepEqual(waits_ms, []);
    await t.close();
  });

  test('429 without Retry-After: retried with base × 2^(n-1), then succeeds', async () => {
    const s = await serve((n) => (n < 2 ? { kind: 'status', status: 429 } : { kind: 'stream', text: 'B', usage }));
    const { t, waits_ms } = target(s.url, { retry: retry3 });
    const a = await t.answer(req);
    assert.equal(a.text, 'B');
    assert.equal(a.attempts, 3);
    assert.deepEqual(waits_ms, [200, 400]);
    assert.ok(a.retry_overhead_ms! >= 0);
    await t.close();
  });

  test('429 with Retry-After: the seed schedule is kept (Retry-After does not stretch it)', async () => {
    const s = await serve((n) => (n < 2 ? { kind: 'status', status: 429, headers: { 'retry-after': '30' } } : { kind: 'plain', text: 'B' }));
    const { t, waits_ms } = target(s.url, { retry: { max_attempts: 3, backoff_base_s: 0.5, backoff_max_s: 0.7 } });
    await t.answer(req);
    assert.deepEqual(waits_ms, [500, 700], 'second wait capped at backoff_max_s');
    await t.close();
  });

  test('500 and 503 are retried; giving up reports status, attempts and overhead', async () => {
    const s = await serve((n) => ({ kind: 'status', status: n % 2 === 0 ? 500 : 503 }));
    const { t, waits_ms } = target(s.url, { retry: { max_attempts: 4, backoff_base_s: 1, backoff_max_s: 3 } });
    const e = await failure(t.answer(req));
    assert.equal(e.code, 'E_HTTP');
    assert.equal(e.status, 503);
    assert.equal(e.attempts, 4);
    assert.equal(typeof e.retry_overhead_ms, 'number');
    assert.deepEqual(waits_ms, [1000, 2000, 3000]);
    assert.equal(s.seen.length, 4);
    await t.close();
  });

  for (const status of [400, 401, 404, 422]) {
    test(`${status} is never retried`, async () => {
      const s = await serve(() => ({ kind: 'status', status }));
      const { t, waits_ms } = target(s.url, { retry: retry3 });
      const e = await failure(t.answer(req));
      assert.equal(e.status, status);
      assert.equal(e.attempts, 1);
      assert.equal(s.seen.length, 1);
      assert.deepEqual(waits_ms, []);
      await t.close();
    });
  }

  test('a hang past the timeout is a timeout, retried', async () => {
    const s = await serve((n) => (n === 0 ? { kind: 'hang' } : { kind: 'plain', text: 'A' }));
    const { t } = target(s.url, { retry: retry3, request_timeout_s: 0.15 });
    const t0 = performance.now();
    const a = await t.answer(req);
    assert.equal(a.text, 'A');
    assert.equal(a.attempts, 2);
    assert.ok(a.retry_overhead_ms! >= 140, `overhead ${a.retry_overhead_ms} covers the timed-out attempt`);
    assert.ok(performance.now() - t0 < 2000);
    await t.close();
  });

  test('a hang with no retry fails as E_TIMEOUT', async () => {
    const s = await serve(() => ({ kind: 'hang' }));
    const { t } = target(s.url, { request_timeout_s: 0.1 });
    const e = await failure(t.answer(req));
    assert.equal(e.code, 'E_TIMEOUT');
    await t.close();
  });

  test('a reset connection is a connection error, retried', async () => {
    const s = await serve((n) => (n === 0 ? { kind: 'reset' } : { kind: 'stream', text: 'C' }));
    const { t, waits_ms } = target(s.url, { retry: retry3 });
    const a = await t.answer(req);
    assert.equal(a.text, 'C');
    assert.equal(a.attempts, 2);
    assert.deepEqual(waits_ms, [200]);
    await t.close();
  });

  test('connection refused is retried and then reported', async () => {
    const s = await serve(() => ({ kind: 'plain', text: 'x' }));
    const url = s.url;
    await s.close();
    const { t, waits_ms } = target(url, { retry: { max_attempts: 2, backoff_base_s: 0.2, backoff_max_s: 5 } });
    const e = await failure(t.answer(req));
    assert.equal(e.code, 'E_CONNECTION');
    assert.equal(e.attempts, 2);
    assert.deepEqual(waits_ms, [200]);
    await t.close();
  });

  test('malformed JSON (plain and streamed) is not retried', async () => {
    const s = await serve((n) =>
      n === 0 ? { kind: 'raw', status: 200, contentType: 'application/json', body: '{"choices": [' } : { kind: 'raw', status: 200, contentType: 'text/event-stream', body: 'data: {nope\n\n' },
    );
    const { t } = target(s.url, { retry: retry3 });
    const e1 = await failure(t.answer(req));
    assert.equal(e1.code, 'E_MALFORMED');
    assert.equal(e1.attempts, 1);
    const e2 = await failure(t.answer(req));
    assert.equal(e2.code, 'E_MALFORMED');
    assert.equal(s.seen.length, 2);
    await t.close();
  });

  test('a redirect is not followed', async () => {
    const elsewhere = await serve(() => ({ kind: 'plain', text: 'should not be asked' }));
    const s = await serve(() => ({ kind: 'status', status: 307, headers: { location: `${elsewhere.url}/chat/completions` } }));
    const { t } = target(s.url, { retry: retry3, apiKey: 'sk-redirect-secret-000' });
    const e = await failure(t.answer(req));
    assert.equal(e.code, 'E_REDIRECT');
    assert.equal(e.status, 307);
    assert.equal(e.attempts, 1);
    assert.equal(elsewhere.seen.length, 0, 'the redirect target never saw a request (nor the key)');
    await t.close();
  });

  test('the key is redacted from an error body that echoes it', async () => {
    const key = 'sk-test-abcdef0123456789';
    const s = await serve(() => ({ kind: 'status', status: 401, body: JSON.stringify({ error: { message: `Incorrect API key provided: ${key}` } }) }));
    const { t } = target(s.url, { apiKey: key });
    const e = await failure(t.answer(req));
    assert.equal(e.status, 401);
    assert.ok(!e.message.includes(key), e.message);
    assert.match(e.message, /REDACTED/);
    await t.close();
  });
});

describe('openai target: a 200 that echoes the key', () => {
  for (const kind of ['plain', 'stream'] as const) {
    test(`${kind}: the key (and the Bearer header carrying it) is redacted from text and meta, layout kept`, async () => {
      const key = 'sk-echo-0123456789abcdef';
      const s = await serve(() => ({ kind, text: `You sent:\nAuthorization: Bearer ${key}\nkey=${key}`, usage }));
      const { t } = target(s.url, { apiKey: key });
      const a = await t.answer(req);
      assert.equal(a.text, 'You sent:\nAuthorization: Bearer [REDACTED]\nkey=[REDACTED]');
      assert.equal(JSON.stringify(a).includes(key), false, 'no key anywhere in the answer (text, meta)');
      assert.equal(s.seen[0]!.headers.authorization, `Bearer ${key}`, 'the key was sent');
      await t.close();
    });
  }
  test('redactDeep: every string inside meta, keys included', () => {
    const key = 'k-0123456789';
    assert.deepEqual(redactDeep({ echo: [`Bearer ${key}`, 1], [key]: null }, key), { echo: ['Bearer [REDACTED]', 1], '[REDACTED]': null });
  });
});

describe('openai target: refused addresses', () => {
  for (const endpoint of ['http://169.254.169.254/v1', 'http://169.254.1.2:8080/v1', 'http://[fd00:ec2::254]/v1', 'http://[fe80::1]/v1', 'http://[::ffff:169.254.169.254]/v1']) {
    test(`refuses ${endpoint} before any request`, () => {
      assert.throws(() => new OpenAITarget({ endpoint, model: 'm', apiKey: 'secret' }), (e: Error & { code?: string }) => e.code === 'E_CONFIG' && /link-local|metadata/.test(e.message));
    });
  }
  test('a host name goes through the guarded lookup and connects when the address is allowed', async () => {
    const s = await serve(() => ({ kind: 'plain', text: 'B' }));
    const { t } = target(s.url.replace('127.0.0.1', 'localhost'));
    assert.equal((await t.answer(req)).text, 'B');
    await t.close();
  });
  test('refuses credentials in the URL', () => {
    assert.throws(() => new OpenAITarget({ endpoint: 'http://u:p@127.0.0.1/v1', model: 'm' }), /credentials/);
  });
});

describe('openai target: the Target contract', async () => {
  const s = await serve(() => ({ kind: 'stream', text: 'Paris', usage }));
  targetContract('openai', () => new OpenAITarget({ endpoint: s.url, model: 'm', apiKey: 'contract-key-value', credentials_ref: 'env:JB_KEY' }));
});
