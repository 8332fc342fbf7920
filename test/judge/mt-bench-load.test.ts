import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { JoulebenchError } from '../../src/core/errors.js';
import { suiteDigest } from '../../src/suites/digest.js';
import { fetchMtBench, MT_BENCH_FILES } from '../../src/suites/mt-bench-fetch.js';
import { loadMtBench, MT_BENCH_CATEGORIES } from '../../src/suites/mt-bench.js';
import { cli } from '../helpers/cli.js';
import { QUESTIONS, writeMtBench } from './mt-bench-data.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-mtb-'));
const files = writeMtBench(dir);

describe('MT-Bench question files (FastChat forms)', () => {
  test('one case per question, category as dataset, turns kept, references from the answer file', () => {
    const suite = loadMtBench(files.questions, { references: files.references });
    assert.equal(suite.name, 'mt-bench');
    assert.equal(suite.scorer, 'judge');
    assert.equal(suite.cases.length, 8);
    assert.deepEqual([...new Set(suite.cases.map((c) => c.dataset))].sort(), [...MT_BENCH_CATEGORIES].sort());
    const math = suite.cases.find((c) => c.id === 'mt-bench-4')!;
    assert.deepEqual(math.turns, QUESTIONS[3]!.turns);
    assert.deepEqual(math.reference, ['51', '60']);
    assert.equal(math.expected, null);
    assert.equal(suite.cases.find((c) => c.id === 'mt-bench-1')!.reference, undefined);
  });

  test('references change the suite digest (they change how cases are scored)', () => {
    assert.notEqual(suiteDigest(loadMtBench(files.questions)), suiteDigest(loadMtBench(files.questions, { references: files.references })));
  });

  test("a question's own reference[] is used when no answer file is given", () => {
    const p = join(dir, 'own-ref.jsonl');
    writeFileSync(p, JSON.stringify({ question_id: 9, category: 'math', turns: ['1+1?'], reference: ['2'] }) + '\n');
    assert.deepEqual(loadMtBench(p).cases[0]!.reference, ['2']);
  });

  for (const [name, line, want] of [
    ['missing turns', { question_id: 1, category: 'math' }, /line 1: turns: is required/],
    ['empty turns', { question_id: 1, category: 'math', turns: [] }, /line 1: turns: must hold at least one turn/],
    ['bad category', { question_id: 1, category: 3, turns: ['x'] }, /line 1: category: must be a string/],
  ] as const) {
    test(`bad question line: ${name} is one line naming the file, line and key`, () => {
      const p = join(dir, `bad-${name.replace(/ /g, '-')}.jsonl`);
      writeFileSync(p, JSON.stringify(line) + '\n');
      assert.throws(() => loadMtBench(p), (e: unknown) => e instanceof JoulebenchError && e.code === 'E_SUITE' && want.test(e.message) && e.message.includes(p));
    });
  }

  test('duplicate ids and references to unknown questions are refused', () => {
    const p = join(dir, 'dup.jsonl');
    writeFileSync(p, [QUESTIONS[0], QUESTIONS[0]].map((q) => JSON.stringify(q)).join('\n') + '\n');
    assert.throws(() => loadMtBench(p), /question_id: 1 already on line 1/);
    const r = join(dir, 'ref-unknown.jsonl');
    writeFileSync(r, JSON.stringify({ question_id: 99, choices: [{ turns: ['x'] }] }) + '\n');
    assert.throws(() => loadMtBench(files.questions, { references: r }), /question_id: 99 is not in/);
  });

  test('without a judge: block the run goes on, judged cases unscored, and the user is told how to score them', async () => {
    const out = join(dir, 'nojudge.json');
    const r = await cli(['run', '--suite', 'mt-bench', '--data', files.questions, '--no-history', '-q', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /warning: this suite is scored by a judge and the config has no judge: block; .*joulebench rescore RESULTS --judge CONFIG/);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(report.scored_count, 0);
    assert.equal(report.mt_bench_score, undefined, 'no judge, no MT-Bench score (not a 0)');
    const refs = await cli(['run', '--suite', 'mt', '--references', files.references, '-q', '--no-history']);
    assert.equal(refs.code, 2);
    assert.match(refs.stderr, /--references applies to --suite mt-bench/);
  });

  test('the CLI refuses --suite mt-bench without --data, in one line with exit 2', async () => {
    const r = await cli(['run', '--suite', 'mt-bench', '-q', '--no-history']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--suite mt-bench needs --data question\.jsonl/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  });
});

describe('joulebench fetch mt-bench', () => {
  test('the pinned files name a commit and a sha256 each', () => {
    for (const f of MT_BENCH_FILES) {
      assert.match(f.url, /^https:\/\/raw\.githubusercontent\.com\/lm-sys\/FastChat\/[0-9a-f]{40}\//);
      assert.match(f.sha256, /^[0-9a-f]{64}$/);
    }
  });

  test('downloads and checks each file against its sha256; a changed file is refused', async () => {
    const body = 'x'.repeat(10) + '\n';
    const server = http.createServer((req, res) => res.end(req.url === '/tampered' ? body + 'more' : body));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const sha = createHash('sha256').update(body).digest('hex');
    try {
      const ok = await fetchMtBench({ files: [{ url: `${base}/q`, sha256: sha, name: 'question.jsonl' }] });
      assert.equal(ok[0]!.bytes.toString(), body);
      await assert.rejects(
        fetchMtBench({ files: [{ url: `${base}/tampered`, sha256: sha, name: 'question.jsonl' }] }),
        (e: unknown) => e instanceof JoulebenchError && /has sha256 [0-9a-f]{64}, the pinned file has/.test(e.message),
      );
    } finally {
      server.close();
    }
  });
});
