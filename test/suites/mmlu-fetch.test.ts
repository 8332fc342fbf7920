import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fetchMmluJsonl } from '../../src/suites/mmlu-fetch.js';
import { loadMmlu } from '../../src/suites/mmlu.js';
import { cli } from '../helpers/cli.js';

// A loopback stand-in for the dataset viewer's /rows API, serving 230 of our own MMLU-format rows.
const TOTAL = 230;
const seen: string[] = [];
const server = http.createServer((req, res) => {
  const u = new URL(req.url ?? '/', 'http://x');
  seen.push(u.search);
  const offset = Number(u.searchParams.get('offset'));
  const length = Number(u.searchParams.get('length'));
  const rows = Array.from({ length: Math.max(0, Math.min(length, TOTAL - offset)) }, (_, i) => {
    const n = offset + i;
    return { row_idx: n, row: { question: `q${n}`, subject: n < 150 ? 'one' : 'two', choices: ['a', 'b', 'c', 'd'], answer: n % 4 }, truncated_cells: [] };
  });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ rows, num_rows_total: TOTAL, num_rows_per_page: 100, partial: false }));
});
await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rows`;
after(() => server.close());

test('fetch mmlu pages through the rows API and writes loader-ready JSONL', async () => {
  const text = await fetchMmluJsonl({ api, split: 'test' });
  assert.equal(seen.length, 3);
  assert.match(seen[0]!, /dataset=cais%2Fmmlu&config=all&split=test&offset=0&length=100/);
  const dir = mkdtempSync(join(tmpdir(), 'jb-fetch-'));
  const p = join(dir, 'm.jsonl');
  writeFileSync(p, text);
  const s = loadMmlu(p, { subjects: ['two'], limit: 2 });
  assert.deepEqual(s.cases.map((c) => [c.id, c.expected]), [['two-0', 'C'], ['two-1', 'D']]);
});

test('joulebench fetch mmlu (spawned) writes the file; an unreachable API is exit 1 with one line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-fetch-cli-'));
  const out = join(dir, 'mmlu.jsonl');
  const r = await cli(['fetch', 'mmlu', '--api', api, '-o', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(readFileSync(out, 'utf8').trim().split('\n').length, TOTAL);
  const bad = await cli(['fetch', 'mmlu', '--api', 'http://127.0.0.1:1/rows', '-o', join(dir, 'x.jsonl')]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /fetch mmlu: cannot reach 127\.0\.0\.1:1/);
  assert.equal(bad.stderr.trim().split('\n').length, 1);
});
