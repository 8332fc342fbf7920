import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig, parseConfig } from '../../src/config/load.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-config-'));
function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

test('seed 003 config: mode runtime is openai, retry defaults filled, paths made absolute', () => {
  const p = write(
    'qwen.yaml',
    'target:\n  mode: runtime\n  endpoint: "https://x.example/v1"\n  model: qwen-max\n  credentials_ref: env:DASHSCOPE_API_KEY\nparams:\n  limit: 100\n  data: data/mmlu\n  retry:\n    max_attempts: 3\nprices:\n  input_usd_per_mtok: 0.5\n  output_usd_per_mtok: 1.5\ntimeouts:\n  request_s: 30\n',
  );
  const c = loadConfig(p);
  assert.equal(c.kind, 'openai');
  assert.deepEqual(c.config.params?.retry, { max_attempts: 3, backoff_base_s: 0.2, backoff_max_s: 5 });
  assert.equal(c.config.params?.data, join(dir, 'data/mmlu'));
  assert.equal(c.config.timeouts?.request_s, 30);
  assert.equal(loadConfig(write('mock.yaml', 'target:\n  mode: mock\n  answers: a.jsonl\n')).kind, 'replay');
  // `mode: mock` alone: the offline mock target (answers from the case ids).
  assert.equal(loadConfig(write('mock-alone.yaml', 'target:\n  mode: mock\n')).kind, 'mock');
});

test('invalid values fail with one line naming the key, never clamped', () => {
  const cases: [unknown, RegExp][] = [
    [{ params: { retry: { max_attempts: 0 } } }, /^config\.yaml: params\.retry\.max_attempts must be >= 1$/],
    [{ params: { retry: { max_attempts: 1.5 } } }, /params\.retry\.max_attempts must be an integer/],
    [{ params: { retry: { max_attempts: 2, backoff_base_s: -0.1 } } }, /params\.retry\.backoff_base_s must be >= 0/],
    [{ params: { retry: { max_attempts: 2, backoff_max_s: -1 } } }, /params\.retry\.backoff_max_s must be >= 0/],
    [{ params: { limit: 0 } }, /params\.limit must be >= 1/],
    [{ params: { subjects: 'x' } }, /params\.subjects must be a list of strings/],
    [{ target: { credentials_ref: 'sk-abc' } }, /target\.credentials_ref must be env:NAME/],
    [{ target: { retries: { max_attempts: 0 } } }, /target\.retries\.max_attempts must be >= 1/],
    [{ target: { kind: 'olama' } }, /target\.kind must be one of cascade, echo, openai, replay, mock, ollama, llamacpp/],
    [{ target: { mode: 'mock', kind: 'openai' } }, /target\.mode "mock" conflicts with target\.kind "openai"/],
    [{ prices: { input_usd_per_mtok: 1 } }, /prices\.output_usd_per_mtok is required/],
    [{ timeouts: { request_s: 0 } }, /timeouts\.request_s must be > 0/],
    [{ params: { retyr: {} } }, /params\.retyr: unknown key/],
  ];
  for (const [raw, re] of cases) {
    assert.throws(() => parseConfig(raw, 'config.yaml'), (e: Error & { code?: string }) => e.code === 'E_CONFIG' && re.test(e.message) && !e.message.includes('\n'), JSON.stringify(raw));
  }
});

test('target.retries (control plane) stays apart from params.retry', () => {
  const c = parseConfig({ target: { kind: 'openai', retries: { max_attempts: 5 } } }, 'c.yaml');
  assert.equal(c.config.params?.retry, undefined);
  assert.equal(c.config.target?.retries?.max_attempts, 5);
});

test('missing file and bad YAML are E_CONFIG naming the file', () => {
  assert.throws(() => loadConfig(join(dir, 'nope.yaml')), /nope\.yaml: no such file/);
  assert.throws(() => loadConfig(write('bad.yaml', 'target: [\n')), /bad\.yaml: not valid YAML/);
});
