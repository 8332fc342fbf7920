import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffDelay_s, isRetryable, NO_RETRY, RETRY_DEFAULTS } from '../../src/targets/retry.js';
import { guardedLookup, isForbiddenAddress } from '../../src/targets/openai/guard.js';
import { redact } from '../../src/targets/openai/redact.js';

test('backoff: base × 2^(n-1), capped at max; seed defaults 0.2 s and 5.0 s', () => {
  const p = { max_attempts: 10, ...RETRY_DEFAULTS };
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay_s(n, p)), [0.2, 0.4, 0.8, 1.6, 3.2, 5, 5]);
  assert.equal(backoffDelay_s(1, { max_attempts: 2, backoff_base_s: 0, backoff_max_s: 5 }), 0);
  assert.equal(NO_RETRY.max_attempts, 1);
});

test('only 429, 5xx, timeouts and connection errors are retryable', () => {
  assert.equal(isRetryable('http', 429), true);
  for (const s of [500, 502, 503, 504, 599]) assert.equal(isRetryable('http', s), true, String(s));
  for (const s of [400, 401, 403, 404, 408, 409, 413, 422]) assert.equal(isRetryable('http', s), false, String(s));
  assert.equal(isRetryable('timeout'), true);
  assert.equal(isRetryable('connection'), true);
  for (const k of ['malformed', 'redirect', 'forbidden', 'aborted'] as const) assert.equal(isRetryable(k), false, k);
});

test('forbidden addresses: link-local v4/v6, metadata, v4-mapped; others allowed', () => {
  for (const ip of ['169.254.169.254', '169.254.0.1', '169.254.255.255', 'fd00:ec2::254', 'fe80::1', '::ffff:169.254.169.254', '[fd00:ec2::254]']) {
    assert.equal(isForbiddenAddress(ip), true, ip);
  }
  for (const ip of ['127.0.0.1', '10.0.0.1', '169.253.255.255', '169.255.0.0', '::1', 'fd00:ec2::253', 'example.com']) {
    assert.equal(isForbiddenAddress(ip), false, ip);
  }
});

test('redact removes the key, bearer tokens and sk- keys, and keeps one line', () => {
  const out = redact('bad key sk-live-0123456789abc\nAuthorization: Bearer tok123 and mysecret', 'mysecret');
  assert.equal(out.includes('mysecret'), false);
  assert.equal(out.includes('tok123'), false);
  assert.equal(out.includes('sk-live'), false);
  assert.equal(out.includes('\n'), false);
});

test('the guarded DNS lookup refuses a name that resolves to a forbidden address (single and all)', async () => {
  const look = (host: string, all: boolean): Promise<string> =>
    new Promise((ok) => guardedLookup(host, all ? { all: true } : {}, (err, addr) => ok(err ? `error ${(err as { code?: string }).code}` : JSON.stringify(addr))));
  assert.equal(await look('169.254.169.254', false), 'error E_FORBIDDEN_ADDRESS');
  assert.equal(await look('169.254.169.254', true), 'error E_FORBIDDEN_ADDRESS');
  assert.equal(await look('fd00:ec2::254', true), 'error E_FORBIDDEN_ADDRESS');
  assert.match(await look('127.0.0.1', true), /127\.0\.0\.1/);
});
