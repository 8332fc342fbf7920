import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { aggregate, reportContextOf, type BenchReport } from '../../src/core/aggregate.js';
import { prettyJson } from '../../src/core/canonical.js';
import type { IdleStatus } from '../../src/core/energy.js';
import type { CaseResult, EnergySource } from '../../src/core/types.js';
import { loadBlockFromResults } from '../../src/load/rebuild.js';
import { rebuildReport, withJudgeBlock } from '../../src/report/rebuild.js';
import { caseLine } from '../../src/runner/case-line.js';
import { parseResultsText, readResultsFile } from '../../src/runner/results-stream.js';
import { seededRng } from '../../src/stats/rng.js';
import { jb } from '../cli/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-rebuild-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const p = (f: string): string => join(dir, f);

/**
 * The whole-file path the stream replaced, as it was: every line parsed and kept, the cases sorted into
 * case order (stable), aggregated; load and judge blocks from the kept lines.
 */
function wholeFile(path: string): BenchReport {
  const file = readResultsFile(path);
  const h = file.header!;
  const rank = { warmup: 0, scored: 1 } as const;
  const sorted = [...file.results].sort((a, b) => rank[a.phase] - rank[b.phase] || a.pass - b.pass || a.index - b.index);
  // A load run's report also had its whole-run window, idle calibration and no per-request windows.
  const energy = (h as { load?: unknown }).load ? (file.other.find((o) => o.record === 'load_energy') as { run: { joules: number | null; source: EnergySource; window_ms: number; below_floor: boolean } | null; idle: { status: IdleStatus; watts: number | null } } | undefined) : undefined;
  const ctx = energy ? { ...reportContextOf(h), energy: { idle: energy.idle, suite: energy.run }, per_case_energy: energy.run !== null ? ('none' as const) : ('target' as const) } : reportContextOf(h);
  const report = aggregate(sorted, ctx);
  const load = loadBlockFromResults(h, file.results, file.other);
  const judge = file.other.find((o) => o.record === 'judge');
  const judged = judge ? withJudgeBlock(report, file.results.filter((r) => r.phase === 'scored'), judge, path) : report;
  return load ? ({ ...judged, load } as BenchReport) : judged;
}

const rng = seededRng('rebuild-test');
function shuffled<T>(xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Writes the header, then the other lines in the given order. */
function writeLines(name: string, lines: readonly string[]): string {
  writeFileSync(p(name), lines.join('\n') + '\n');
  return p(name);
}

const header = { record: 'header', format: 'joulebench-results/1', suite: 's', suite_version: '1', suite_digest: 'sha256:abc', config_digest: 'c', target: 't', meter: 'rapl', warmup: 1, repeats: 2, concurrency: 4 };

/** Cases whose sums depend on order (values of very different size), some with a trace, a modelled range or meta. */
function syntheticCases(n: number): CaseResult[] {
  const out: CaseResult[] = [];
  for (const [phase, passes] of [['warmup', 1], ['scored', 2]] as const) {
    for (let pass = 0; pass < passes; pass++) {
      for (let index = 0; index < n; index++) {
        const k = index * 7 + pass;
        const r: CaseResult = {
          record: 'case', phase, pass, index, case_id: `c${index}`, dataset: index % 3 === 0 ? 'alpha' : 'beta', response: `answer ${k}`,
          stage: index % 5 === 0 ? null : 'neural', expected: 'x', passed: k % 4 === 0 ? null : k % 3 !== 0, score: null, weight: 1 + (index % 2) * 0.1,
          joules: (k % 11) * 1e-9 + (k % 13) * 1e3 + 0.1, energy_source: 'rapl', below_floor: false, latency_ms: (k * 7919) % 1000 + 0.123,
          ttft_ms: k % 2 ? null : k * 0.01, tpot_ms: null, prompt_tokens: 10 + k, completion_tokens: 3, cost_usd: k * 1e-7 + 0.1, attempts: 1 + (k % 2),
          retry_overhead_ms: (k % 2) * 0.3, error: k % 17 === 0 ? { code: 'E_TARGET', message: 'boom' } : null,
        };
        // A modelled energy's range, summed by the aggregate in case order.
        if (k % 11 === 0) Object.assign(r, { energy_source: 'model:api', joules: k * 1e-3 + 0.3, joules_range: { low: k * 1e-9 + 0.1, high: (k % 13) * 1e3 + 0.7 } });
        if (k % 9 === 0) r.trace = [{ stage: 'kv', hit: false, energy_uj: 0.1 * k }, { stage: 'neural', hit: true, energy_uj: 1e6 + k }];
        if (k % 23 === 0) r.meta = { 'note\n': 'a key with an escape' };
        else if (k % 29 === 0) r.meta = { e2e_ms: k / 7, streamed: k % 2 === 0 };
        out.push(r);
      }
    }
  }
  return out;
}

describe('rebuildReport: a results file streamed into the report, byte-identical to the whole-file path', () => {
  it("a real concurrent run's file, as written and with its lines shuffled or reversed, gives the run's own report", () => {
    const home = p('home');
    const r = jb(['run', '-q', '--no-history', '--suite', 'router', '--concurrency', '8', '--repeat', '2', '--warmup', '1', '--meter', 'model', '-o', p('conc.json')], { home });
    assert.equal(r.code, 0, r.stderr);
    // Its throughput (cases/s over the scored passes' wall time) is a wall-clock figure: the run's
    // run_measures line holds the wall time, so the rebuilt report has it too, and every byte is the run's.
    const ownReport = JSON.parse(readFileSync(p('conc.json'), 'utf8')) as { throughput: unknown };
    assert.ok(ownReport.throughput !== null);
    const own = prettyJson(ownReport);
    const lines = readFileSync(p('conc.results.jsonl'), 'utf8').trim().split('\n');
    const variants = {
      'as written': lines,
      shuffled: [lines[0]!, ...shuffled(lines.slice(1))],
      reversed: [lines[0]!, ...lines.slice(1).reverse()],
      sorted: [lines[0]!, ...lines.slice(1).filter((l) => !l.includes('"record":"case"')), ...readResultsFile(p('conc.results.jsonl')).results.sort((a, b) => (a.phase === b.phase ? 0 : a.phase === 'warmup' ? -1 : 1) || a.pass - b.pass || a.index - b.index).map(caseLine)],
    };
    for (const [name, ls] of Object.entries(variants)) {
      const path = writeLines(`conc-${name}.results.jsonl`, ls);
      const out = jb(['report', '--json', path], { home });
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, own, name);
      for (const chunkBytes of [64, 1 << 16]) {
        const rebuilt = rebuildReport(path, { chunkBytes });
        assert.equal(prettyJson(rebuilt.report), own, `${name}, chunk ${chunkBytes}`);
        if (name === 'sorted') assert.ok(rebuilt.in_order);
        if (name === 'reversed') assert.ok(!rebuilt.in_order);
      }
    }
  });

  it('a run with --bootstrap N: its header says so, and the rebuilt intervals are the run\'s own; a bad header value is one line', () => {
    const home = p('home');
    for (const n of ['0', '50']) {
      const r = jb(['run', '-q', '--no-history', '--suite', 'router', '--bootstrap', n, '-o', p(`boot${n}.json`)], { home });
      assert.equal(r.code, 0, r.stderr);
      const out = jb(['report', '--json', p(`boot${n}.results.jsonl`)], { home });
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, readFileSync(p(`boot${n}.json`), 'utf8'), `--bootstrap ${n}`);
      assert.equal((JSON.parse(out.stdout) as { ci: { resamples: number } }).ci.resamples, Number(n));
    }
    const lines = readFileSync(p('boot50.results.jsonl'), 'utf8').split('\n');
    for (const [key, value] of [['bootstrap', -1], ['bootstrap', 1.5], ['concurrency', 0], ['shared', 'yes']] as const) {
      const path = writeLines(`bad-header-${key}.results.jsonl`, [JSON.stringify({ ...JSON.parse(lines[0]!), [key]: value }), ...lines.slice(1, -1)]);
      const r = jb(['report', '--json', path], { home });
      assert.equal(r.code, 2, `${key}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`line 1: header key ${key} must be`));
      assert.equal(r.stderr.trim().split('\n').length, 1);
    }
  });

  it('order-sensitive sums, lines with meta and other records: the same bytes in any line order', () => {
    const cases = syntheticCases(300);
    const others = [JSON.stringify({ record: 'resume', at: 1 }), JSON.stringify({ record: 'end', scored: 600 })];
    const inOrder = [JSON.stringify(header), ...cases.map((c) => (c.meta ? JSON.stringify(c) : caseLine(c))), ...others];
    const files = {
      'in order': inOrder,
      shuffled: [inOrder[0]!, ...shuffled(inOrder.slice(1))],
      // Most lines in order, one written late (a slow case); a BOM before the header.
      'late line': ['\ufeff' + inOrder[0]!, ...inOrder.slice(1, 200), ...inOrder.slice(201), inOrder[200]!],
      // A hand-edited line (spaces, keys in another order) is read by JSON.parse.
      'hand-edited': [inOrder[0]!, JSON.stringify(cases[5], null, 0).replace('"phase":', ' "phase" : '), ...inOrder.slice(1).filter((l) => !l.includes('"case_id":"c5",') || !l.includes('"phase":"warmup","pass":0')).reverse()],
    };
    let reference: string | null = null;
    for (const [name, lines] of Object.entries(files)) {
      const path = writeLines(`synthetic-${name.replace(' ', '-')}.results.jsonl`, lines);
      const old = prettyJson(wholeFile(path));
      for (const chunkBytes of [100, 1 << 16]) {
        const rebuilt = rebuildReport(path, { chunkBytes, keep: 'scored' });
        assert.equal(prettyJson(rebuilt.report), old, `${name}, chunk ${chunkBytes}`);
        for (const keep of ['none', 'paired'] as const) {
          assert.equal(prettyJson(rebuildReport(path, { chunkBytes, keep }).report), old, `${name}, chunk ${chunkBytes}, ${keep}`);
        }
        assert.deepEqual(rebuilt.scored, readResultsFile(path).results.filter((r) => r.phase === 'scored'));
      }
      if (name !== 'in order') assert.equal(rebuildReport(path).in_order, false, name);
      if (name !== 'hand-edited') {
        reference ??= old;
        assert.equal(old, reference, `${name}: line order changed the report`);
      }
    }
    // The order matters at all: summed in file order, the shuffled file's figures differ (else this test proves nothing).
    const shuffledFile = readResultsFile(p('synthetic-shuffled.results.jsonl'));
    assert.notEqual(prettyJson(aggregate(shuffledFile.results, reportContextOf(shuffledFile.header!))), reference);
  });

  it('a judged file: the MT-Bench block from the judged cases and the judge line, in any line order', () => {
    const cases = syntheticCases(40).map((c, i) => ({ ...c, score: c.phase === 'scored' && i % 7 !== 0 ? 1 + (i % 10) : null, meta: c.phase === 'scored' ? { judge: { mode: 'single', ratings: [i % 10], prompts: ['single'], error: null } } : undefined }) as CaseResult);
    const judge = { record: 'judge', model: 'judge-m', mode: 'single', prompt_hash: 'sha256:j', pass: 5, temperature: 0, tally: { judgements: 60, cached: 2, requests: 58, errors: 1, joules: 12.5, usd: null, prompt_tokens: 100, completion_tokens: 20, energy_sources: ['model'] } };
    const lines = [JSON.stringify(header), ...cases.map((c) => JSON.stringify(c)), JSON.stringify(judge)];
    for (const [name, ls] of [['in order', lines], ['shuffled', [lines[0]!, ...shuffled(lines.slice(1))]]] as const) {
      const path = writeLines(`judged-${name.replace(' ', '-')}.results.jsonl`, ls);
      const rebuilt = rebuildReport(path).report as BenchReport & { mt_bench_score?: unknown; judge?: unknown };
      assert.equal(prettyJson(rebuilt), prettyJson(wholeFile(path)), name);
      assert.equal(typeof rebuilt.mt_bench_score, 'number');
      assert.equal((rebuilt.judge as { model: string }).model, 'judge-m');
    }
    const bad = writeLines('judged-bad.results.jsonl', [...lines.slice(0, -1), JSON.stringify({ ...judge, tally: null })]);
    assert.throws(() => rebuildReport(bad), /judged-bad\.results\.jsonl: the judge line is malformed/);
  });

  it('a load-mode file: the load block from the per-request records and the load_energy line, as the whole-file path', () => {
    const loadHeader = { ...header, warmup: 0, repeats: 1, concurrency: 1, load: { request_rate: 'inf', burstiness: 1, num_requests: 30, max_concurrency: 4, ttft_token: 'content', percentiles: [50, 99], slo: {}, cooldown_s: 0, seed: 1 } };
    const cases = syntheticCases(30).filter((c) => c.phase === 'scored' && c.pass === 0).map((c, i) => ({
      ...c,
      meta: { load: { request: i, planned_at_ms: i * 2, sent_at_ms: i * 2 + 0.5, queue_ms: 0.1, lag_ms: 0.2, first_token_ms: 3 + i, first_content_ms: 4 + i, e2e_ms: 20 + i, token_times_ms: [4 + i, 6 + i], content_chunks: 2, reasoning_chunks: 0 } },
    }));
    const energy = { record: 'load_energy', run: { joules: 10, source: 'rapl', window_ms: 100, below_floor: false }, run_end_ms: 100, steady: null, idle: { status: 'skipped', watts: null } };
    const lines = [JSON.stringify(loadHeader), ...cases.map((c) => JSON.stringify(c)), JSON.stringify(energy)];
    for (const [name, ls] of [['in order', lines], ['shuffled', [lines[0]!, ...shuffled(lines.slice(1))]]] as const) {
      const path = writeLines(`load-${name.replace(' ', '-')}.results.jsonl`, ls);
      const rebuilt = rebuildReport(path).report as BenchReport & { load?: { serving: Record<string, unknown> } };
      assert.equal(prettyJson(rebuilt), prettyJson(wholeFile(path)), name);
      assert.ok(rebuilt.load && typeof rebuilt.load.serving.request_throughput === 'number');
    }
  });

  it('bad lines keep the whole-file reader’s messages, in the in-order prefix too', () => {
    const good = caseLine(syntheticCases(2)[0]!);
    const bad: Record<string, string[]> = {
      'not JSON': [JSON.stringify(header), good, '{not json}'],
      'torn fast-path line mid-file': [JSON.stringify(header), good.slice(0, 80), good],
      'case before header': [good, JSON.stringify(header)],
      'header not first': [JSON.stringify({ record: 'resume' }), JSON.stringify(header)],
      'pass not an integer': [JSON.stringify(header), good.replace('"pass":0', '"pass":0.5')],
      'phase unknown': [JSON.stringify(header), good.replace('"phase":"warmup"', '"phase":"warm"')],
      'no record': [JSON.stringify(header), good.replace('"record":"case",', '')],
      'second header, other digests': [JSON.stringify(header), good, JSON.stringify({ ...header, suite_digest: 'x' })],
      'no header': [JSON.stringify({ record: 'end' })],
      'trailing garbage': [JSON.stringify(header), good + 'x'],
      // A figure that is not a number (it was summed as text: total_usd 1.1e29), missing, or too large
      // for a double; a null where a case line never has one. The parser refuses each.
      'cost as a string': [JSON.stringify(header), good.replace(/"cost_usd":[^,]*/, '"cost_usd":"1"')],
      'tokens as a string': [JSON.stringify(header), good.replace(/"prompt_tokens":[^,]*/, '"prompt_tokens":"abc"')],
      'latency as a string, with meta': [JSON.stringify(header), good.replace(/"latency_ms":[^,]*/, '"latency_ms":"5"').replace(/\}$/, ',"meta":{"x":1}}')],
      'joules missing': [JSON.stringify(header), good.replace(/"joules":[^,]*,/, '')],
      'latency too large for a double': [JSON.stringify(header), good.replace(/"latency_ms":[^,]*/, '"latency_ms":1e400')],
      'weight null': [JSON.stringify(header), good.replace(/"weight":[^,]*/, '"weight":null')],
      'an error without its message': [JSON.stringify(header), good.replace(/"error":(null|\{[^}]*\})/, '"error":{"code":"E_TARGET"}')],
      'a trace step of the wrong shape': [JSON.stringify(header), good.replace(/\}$/, ',"trace":[{"stage":"cache","hit":"no","energy_uj":1}]}')],
    };
    for (const [name, lines] of Object.entries(bad)) {
      const path = writeLines(`bad-${name.replace(/\W+/g, '-')}.results.jsonl`, lines);
      let expected = '';
      try {
        const f = parseResultsText(lines.join('\n') + '\n', path);
        if (!f.header) expected = `${path}: results file has no header line`;
      } catch (e) {
        expected = (e as Error).message;
      }
      assert.ok(expected !== '', name);
      for (const keep of ['none', 'scored'] as const) assert.throws(() => rebuildReport(path, { keep, chunkBytes: 64 }), { message: expected }, name);
      const r = jb(['report', '--json', path], { home: p('home') });
      assert.equal(r.code, 2, name);
      assert.equal(r.stderr.trim().split('\n').length, 1, `${name}: ${r.stderr}`);
      assert.equal(r.stdout, '', name);
    }
  });
});
