import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { aggregate, reportContextOf } from '../../src/core/aggregate.js';
import { prettyJson } from '../../src/core/canonical.js';
import type { CaseResult } from '../../src/core/types.js';
import { readResultsFile } from '../../src/runner/results-file.js';
import { rebuildReport } from '../../src/report/rebuild.js';
import type { ScanAheadStats } from '../../src/report/scan-ahead.js';
import { caseLine } from '../../src/runner/case-line.js';
import { seededRng } from '../../src/stats/rng.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-scan-ahead-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const rng = seededRng('scan-ahead-test');

const header = { record: 'header', format: 'joulebench-results/1', suite: 's', suite_version: '1', suite_digest: 'sha256:abc', config_digest: 'c', target: 't', meter: 'rapl', warmup: 1, repeats: 2, concurrency: 4 };

/** Cases of several datasets, stages, sources and traces (more distinct traces than the cache holds), some lines only JSON.parse reads. */
function lines(n: number, modelled = false): string[] {
  const out = [JSON.stringify(header)];
  for (const [phase, passes] of [['warmup', 1], ['scored', 2]] as const) {
    for (let pass = 0; pass < passes; pass++) {
      for (let index = 0; index < n; index++) {
        const k = index * 7 + pass;
        const r: CaseResult = {
          record: 'case', phase, pass, index, case_id: `c${index}`, dataset: ['alpha', 'beta', 'gämma ✓'][index % 3]!, response: k % 10 === 0 ? 'quote " and \\ back' : `answer ${k}`,
          stage: index % 5 === 0 ? null : ['cache', 'kv', 'neural'][k % 3]!, expected: null, passed: k % 4 === 0 ? null : k % 3 !== 0, score: k % 6 === 0 ? 0.5 : null, weight: 1 + (index % 2) * 0.1,
          joules: k % 19 === 0 ? null : (k % 11) * 1e-9 + (k % 13) * 1e3 + 0.1, energy_source: k % 8 === 0 ? 'model' : 'rapl', below_floor: k % 29 === 0, latency_ms: (k * 7919) % 1000 + 0.123,
          ttft_ms: k % 2 ? null : k * 0.01, tpot_ms: null, prompt_tokens: 10 + k, completion_tokens: 3, cost_usd: k * 1e-7 + 0.1, attempts: 1 + (k % 2),
          retry_overhead_ms: (k % 2) * 0.3, error: k % 17 === 0 ? { code: 'E_TARGET', message: 'boom' } : null,
        };
        // A modelled energy's range (the aggregate sums it): carried in the worker's record.
        if (modelled) Object.assign(r, { energy_source: 'model:api', below_floor: false, joules: k / 2.5 + 0.2, joules_range: { low: k / 3, high: k / 2 + 0.1 } });
        if (k % 3 !== 0) r.trace = [{ stage: 'kv', hit: false, energy_uj: k % 12 }, { stage: 'neural', hit: true, energy_uj: 1e6 }];
        // A flat meta is checked and skipped by the scanners (after a trace or not); a key with an escape sends the line to JSON.parse.
        if (k % 23 === 0) r.meta = { e2e_ms: k / 7, streamed: k % 2 === 0 };
        else if (k % 31 === 0) r.meta = { 'note\n': 'only JSON.parse reads this line' };
        out.push(r.meta ? JSON.stringify(r) : caseLine(r));
      }
    }
  }
  return out;
}

/** Each line written up to `late` places after its place (a concurrent run's order). */
function late(ls: string[], by: number): string[] {
  const at = ls.slice(1).map((l, i) => ({ l, t: i + rng.below(by + 1) }));
  return [ls[0]!, ...at.sort((a, b) => a.t - b.t).map((x) => x.l)];
}

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('ScanAhead: lines scanned on a worker thread give the same report, or the main thread reads them', () => {
  it('in order, a concurrent order, a BOM, a torn last line, hand-edited lines: byte-identical to the main-thread scan, the ring wrapping around', () => {
    const ls = lines(120);
    const files = {
      'in order': ls.join('\n') + '\n',
      concurrent: late(ls, 10).join('\n') + '\n',
      'bom and torn last line': '\ufeff' + ls.join('\n') + '\n' + ls[5]!.slice(0, 90),
      'hand-edited and blank': [...ls.slice(0, 50), ls[50]!.replace('"index":', ' "index" : '), '', ...ls.slice(51)].join('\n') + '\n',
    };
    for (const [name, text] of Object.entries(files)) {
      const path = write(`${name.replace(/\W+/g, '-')}.results.jsonl`, text);
      const reference = prettyJson(rebuildReport(path, { scanAheadMinBytes: Infinity }).report);
      // A ring of a few lines wraps around hundreds of times (each wrap a hand-over between threads: slow under load, so few lines).
      for (const [slots, chunkBytes] of [[4, 200], [64, 1 << 16]] as const) {
        let stats: ScanAheadStats | null = null;
        const got = rebuildReport(path, { scanAheadMinBytes: 0, scanAheadSlots: slots, scanAheadWait: true, chunkBytes, onScanAhead: (s) => (stats = s) });
        assert.equal(prettyJson(got.report), reference, `${name}, ${slots} slots, chunk ${chunkBytes}`);
        const s = stats as ScanAheadStats | null;
        assert.ok(s !== null && s.left === null && s.records > 250, `${name}: ${JSON.stringify(s)}`);
      }
      // Without waiting (as the CLI runs): whatever lines the worker got to first, the same report.
      let stats: ScanAheadStats | null = null;
      const got = rebuildReport(path, { scanAheadMinBytes: 0, scanAheadSlots: 64, chunkBytes: 300, onScanAhead: (s) => (stats = s) });
      assert.equal(prettyJson(got.report), reference, `${name}, not waiting`);
      assert.equal((stats as ScanAheadStats | null)?.left, null);
      // The worker is off by default, and for a small file with JOULEBENCH_REPORT_WORKER=1; =0 turns it off.
      let started = false;
      rebuildReport(path, { onScanAhead: () => (started = true) });
      process.env.JOULEBENCH_REPORT_WORKER = '1';
      try {
        rebuildReport(path, { onScanAhead: () => (started = true) });
      } finally {
        delete process.env.JOULEBENCH_REPORT_WORKER;
      }
      process.env.JOULEBENCH_REPORT_WORKER = '0';
      try {
        rebuildReport(path, { scanAheadMinBytes: 0, onScanAhead: () => (started = true) });
      } finally {
        delete process.env.JOULEBENCH_REPORT_WORKER;
      }
      assert.equal(started, false);
    }
  });

  it("a modelled run (model:api energy with a range on every line): the worker's records carry each range", () => {
    const ls = lines(120, true);
    const path = write('modelled.results.jsonl', late(ls, 10).join('\n') + '\n');
    const reference = rebuildReport(path, { scanAheadMinBytes: Infinity }).report;
    // The range is summed at all (else this proves nothing), and as JSON.parse of every line sums it.
    const file = readResultsFile(path);
    const rank = { warmup: 0, scored: 1 } as const;
    const sorted = [...file.results].sort((a, b) => rank[a.phase] - rank[b.phase] || a.pass - b.pass || a.index - b.index);
    assert.ok(reference.energy_model_range, 'a range in the report');
    assert.equal(prettyJson(reference), prettyJson(aggregate(sorted, reportContextOf(file.header!))), 'the report JSON.parse of every line gives');
    assert.ok(file.results.every((r) => r.joules_range !== undefined));
    for (const [slots, chunkBytes] of [[4, 200], [64, 1 << 16]] as const) {
      const got = rebuildReport(path, { scanAheadMinBytes: 0, scanAheadSlots: slots, scanAheadWait: true, chunkBytes });
      assert.equal(prettyJson(got.report), prettyJson(reference), `${slots} slots, chunk ${chunkBytes}`);
    }
  });

  it('a bad line or bad UTF-8 deep in the file: the same one-line error with the worker on, and the worker stopped', () => {
    const ls = lines(120);
    const cases: Record<string, string> = {
      'not JSON': [...ls.slice(0, 300), '{not json}', ...ls.slice(300)].join('\n') + '\n',
      'pass not an integer': [...ls.slice(0, 250), ls[250]!.replace(/"pass":\d+/, '"pass":0.5'), ...ls.slice(251)].join('\n') + '\n',
    };
    for (const [name, text] of Object.entries(cases)) {
      const path = write(`bad-${name.replace(/\W+/g, '-')}.results.jsonl`, text);
      let expected = '';
      try {
        rebuildReport(path, { scanAheadMinBytes: Infinity });
      } catch (e) {
        expected = (e as Error).message;
      }
      assert.ok(expected !== '', name);
      for (const scanAheadWait of [true, false]) assert.throws(() => rebuildReport(path, { scanAheadMinBytes: 0, scanAheadSlots: 16, scanAheadWait, chunkBytes: 300 }), { message: expected }, name);
    }
    const good = Buffer.from(ls.join('\n') + '\n');
    const at = good.length - 1000;
    good[at] = 0xff;
    const path = join(dir, 'bad-utf8.results.jsonl');
    writeFileSync(path, good);
    assert.throws(() => rebuildReport(path, { scanAheadMinBytes: 0, scanAheadWait: true }), new RegExp(`not valid UTF-8 \\(first bad byte sequence at byte offset ${at}\\)`));
  });
});
