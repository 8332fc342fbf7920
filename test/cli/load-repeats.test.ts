import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadBlockFromResults } from '../../src/load/rebuild.js';
import { readResultsFile } from '../../src/runner/results-stream.js';
import { runCommand } from '../../src/cli/commands/run.js';
import { cli } from '../helpers/cli.js';
import { startLoadServer, type LoadServer } from '../helpers/load-server.js';

interface Figure {
  values: (number | null)[];
  mean: number | null;
  sd: number | null;
  cv: number | null;
  ci: { low: number; high: number; level: number; method: string; t_critical: number } | { reason: string };
}
interface Doc {
  format: string;
  runs: number;
  request_rate: number;
  reports: string[];
  results: string[];
  figures: Record<string, Figure>;
}

// t(0.975, 2) and t(0.975, 1), from the t table (NIST/SEMATECH 1.3.6.7.2, to more digits).
const T_975_DF2 = 4.30265273;
const T_975_DF1 = 12.70620474;

describe('joulebench run --request-rate R --runs N: repeated load runs', () => {
  let server: LoadServer;
  let dir: string;
  before(async () => {
    server = await startLoadServer((p) => ({ ttft_ms: 5, tpot_ms: 2, tokens: 3, answer: p.split(' ')[1] ?? '?' }));
    dir = mkdtempSync(join(tmpdir(), 'jb-load-runs-'));
    const cases = ['alpha', 'bravo', 'charlie', 'delta'].map((w, i) => ({ id: `c${i}`, prompt: `say ${w}`, expected: w }));
    writeFileSync(join(dir, 'suite.jsonl'), cases.map((c) => JSON.stringify(c)).join('\n') + '\n');
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const base = (rate = '200') => ['run', '--suite', join(dir, 'suite.jsonl'), '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--no-history', '--idle-ms', '1', '--request-rate', rate, '--num-requests', '4'];

  it('writes one whole run per results file and a t-interval and CV per serving figure; compare pairs two of them run by run', async () => {
    const a = join(dir, 'a.json');
    const r = await cli([...base(), '--runs', '3', '--cooldown-s', '0', '-o', a]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(readFileSync(a, 'utf8')) as Doc;
    assert.equal(doc.format, 'joulebench-load-repeats/1');
    assert.equal(doc.runs, 3);
    assert.deepEqual(doc.results, ['a.run-1.results.jsonl', 'a.run-2.results.jsonl', 'a.run-3.results.jsonl']);
    assert.deepEqual(doc.reports, ['a.run-1.json', 'a.run-2.json', 'a.run-3.json']);
    // Each run's results file rebuilds that run's own load block.
    for (const [i, res] of doc.results.entries()) {
      const path = resolve(dirname(a), res);
      const file = readResultsFile(path);
      const report = JSON.parse(readFileSync(resolve(dirname(a), doc.reports[i]!), 'utf8')) as { load: { serving: Record<string, unknown> } };
      const block = loadBlockFromResults(file.header!, file.results, file.other);
      assert.deepEqual(block, report.load);
      assert.equal(file.results.filter((c) => c.phase === 'scored').length, 4);
      assert.equal(doc.figures.request_throughput!.values[i], report.load.serving.request_throughput);
      assert.equal(doc.figures.p99_ttft_ms!.values[i], report.load.serving.p99_ttft_ms);
    }
    for (const name of ['request_throughput', 'output_throughput', 'mean_ttft_ms', 'median_tpot_ms', 'p99_itl_ms', 'mean_e2el_ms', 'accuracy_pct']) {
      const f = doc.figures[name]!;
      assert.ok(f, name);
      const xs = f.values as number[];
      const mean = xs.reduce((s, v) => s + v, 0) / 3;
      const sd = Math.sqrt(xs.reduce((s, v) => s + (v - mean) ** 2, 0) / 2);
      assert.ok(Math.abs(f.mean! - mean) <= 1e-9 * Math.abs(mean), `${name} mean`);
      if (sd === 0) {
        assert.equal((f.ci as { method: string }).method, 'degenerate', name);
        continue;
      }
      const ci = f.ci as { low: number; high: number; method: string; t_critical: number };
      assert.equal(ci.method, 'student-t', name);
      assert.ok(Math.abs(ci.t_critical - T_975_DF2) < 1e-6, `${name} t ${ci.t_critical}`);
      const half = T_975_DF2 * (sd / Math.sqrt(3));
      assert.ok(Math.abs(ci.low - (mean - half)) <= 1e-6 * Math.abs(mean), `${name} low ${ci.low} vs ${mean - half}`);
      assert.ok(Math.abs(ci.high - (mean + half)) <= 1e-6 * Math.abs(mean), `${name} high`);
      assert.ok(Math.abs(f.cv! - sd / Math.abs(mean)) <= 1e-6 * (sd / Math.abs(mean)), `${name} cv`);
    }
    // Without --slo there is no goodput: no value in any run, no statistics (never 0).
    assert.deepEqual(doc.figures.request_goodput, { values: [null, null, null], mean: null, sd: null, cv: null, ci: { reason: 'no value in any run' } });
    // The document on stdout (as a rate sweep's), the table on stderr.
    assert.equal((JSON.parse(r.stdout) as Doc).runs, 3);
    assert.match(r.stderr, /3 load runs at 200\/s/);
    assert.match(r.stderr, /request_throughput\s+[\d.]+\s+(\[|degenerate)/);

    // A second repeated run of two runs: compare pairs runs 1–2 and says the baseline's run 3 was left out.
    const b = join(dir, 'b.json');
    const rb = await cli([...base(), '--runs', '2', '--cooldown-s', '0', '-o', b, '-q']);
    assert.equal(rb.code, 0, rb.stderr);
    const docB = JSON.parse(readFileSync(b, 'utf8')) as Doc;
    const out = join(dir, 'cmp.json');
    const c = await cli(['compare', a, b, '-o', out]);
    assert.equal(c.code, 0, c.stderr);
    const cmp = JSON.parse(readFileSync(out, 'utf8')) as {
      format: string;
      pairing: string;
      paired_runs: number;
      notes: string[];
      figures: Record<string, { differences: number[]; mean_difference: number; ci: { low: number; high: number; method: string; t_critical: number } | { reason: string } }>;
    };
    assert.equal(cmp.format, 'joulebench-load-repeats-comparison/1');
    assert.equal(cmp.paired_runs, 2);
    assert.match(cmp.pairing, /run i of the baseline with run i of the candidate/);
    assert.match(cmp.notes.join('\n'), /baseline has 3 runs and the candidate 2: runs 1–2 are paired, the baseline's run 3 is left out/);
    assert.match(c.stderr, /2 paired runs: run i of the baseline with run i of the candidate/);
    const fa = doc.figures.request_throughput!.values as number[];
    const fb = docB.figures.request_throughput!.values as number[];
    const d = [fb[0]! - fa[0]!, fb[1]! - fa[1]!];
    const f = cmp.figures.request_throughput!;
    for (const i of [0, 1]) assert.ok(Math.abs(f.differences[i]! - d[i]!) <= 1e-6 * Math.max(1, Math.abs(d[i]!)), `difference ${i}`);
    const dm = (d[0]! + d[1]!) / 2;
    const dsd = Math.abs(d[0]! - d[1]!) / Math.sqrt(2);
    if (dsd > 0) {
      const ci = f.ci as { low: number; high: number; method: string; t_critical: number };
      assert.equal(ci.method, 'paired-t');
      assert.ok(Math.abs(ci.t_critical - T_975_DF1) < 1e-6);
      assert.ok(Math.abs(ci.low - (dm - T_975_DF1 * dsd / Math.sqrt(2))) <= 1e-6 * Math.max(1, Math.abs(ci.low)), `low ${ci.low}`);
    }
  });

  it('refuses --runs with several rates, without --request-rate, and compare of a repeated run with a single run, each in one line', async () => {
    const sweep = await cli([...base('1,2'), '--runs', '2']);
    assert.equal(sweep.code, 2, sweep.stderr);
    assert.match(sweep.stderr, /--runs repeats one load run: give --request-rate one rate/);
    const closed = await cli(['run', '--suite', join(dir, 'suite.jsonl'), '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--no-history', '--runs', '2']);
    assert.equal(closed.code, 2, closed.stderr);
    assert.match(closed.stderr, /--runs applies to load runs only: add --request-rate/);
    const one = join(dir, 'one.json');
    const single = await cli([...base(), '-o', one, '-q']);
    assert.equal(single.code, 0, single.stderr);
    const rep = join(dir, 'r2.json');
    assert.equal((await cli([...base(), '--runs', '2', '--cooldown-s', '0', '-o', rep, '-q'])).code, 0);
    const mixed = await cli(['compare', rep, one]);
    assert.equal(mixed.code, 2, mixed.stderr);
    assert.equal(mixed.stderr.trim().split('\n').length, 1, mixed.stderr);
    assert.match(mixed.stderr, /r2\.json is a repeated load run and .*one\.json is not/);
  });

  it('waits --cooldown-s between runs, never before the first or after the last (the wait is injected)', async () => {
    const waits: number[] = [];
    let stdout = '';
    const io = { out: (s: string) => void (stdout += s), err: () => undefined, errIsTTY: false };
    const out = join(dir, 'cool.json');
    const cmd = runCommand(io, { wait: async (s) => void waits.push(s) });
    cmd.exitOverride();
    await cmd.parseAsync([...base().slice(1), '--runs', '3', '--cooldown-s', '7', '-o', out], { from: 'user' });
    assert.deepEqual(waits, [7, 7]);
    assert.equal((JSON.parse(stdout) as Doc).runs, 3);
    assert.ok(existsSync(join(dir, 'cool.run-3.results.jsonl')));
  });
});
