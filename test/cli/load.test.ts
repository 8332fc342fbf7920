import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadBlockFromResults } from '../../src/load/rebuild.js';
import { readResultsFile } from '../../src/runner/results-stream.js';
import { cli } from '../helpers/cli.js';
import { startLoadServer, type LoadServer } from '../helpers/load-server.js';

describe('joulebench run --request-rate: open-loop load from the command line', () => {
  let server: LoadServer;
  let dir: string;
  before(async () => {
    // A prompt with "hold" in it is held ~120 ms (110 ms to the first token, then two more 5 ms apart).
    server = await startLoadServer((p) => ({
      ttft_ms: p.includes('hold') ? 110 : 15,
      tpot_ms: p.includes('hold') ? 5 : 3,
      tokens: p.includes('hold') ? 3 : 4,
      answer: p.includes('wrong') ? 'zulu' : (p.split(' ')[1] ?? '?'),
    }));
    dir = mkdtempSync(join(tmpdir(), 'jb-load-cli-'));
    const cases = ['alpha', 'bravo', 'charlie', 'delta wrong'].map((w, i) => ({ id: `c${i}`, prompt: `say ${w}`, expected: w.split(' ')[0] }));
    writeFileSync(join(dir, 'suite.jsonl'), cases.map((c) => JSON.stringify(c)).join('\n') + '\n');
    writeFileSync(join(dir, 'hold.jsonl'), ['alpha', 'bravo'].map((w, i) => JSON.stringify({ id: `h${i}`, prompt: `say ${w} hold`, expected: w })).join('\n') + '\n');
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const base = () => ['run', '--suite', join(dir, 'suite.jsonl'), '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--no-history', '--idle-ms', '1'];

  it('writes a report with vLLM-named serving fields, goodput and correct goodput', async () => {
    const out = join(dir, 'one.json');
    const r = await cli([...base(), '--request-rate', '40', '--num-requests', '10', '--max-concurrency', '2', '--slo', 'ttft_ms=2000,e2el_ms=5000', '--percentiles', '50,99', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(out, 'utf8')) as { case_count: number; load: { serving: Record<string, unknown>; request_rate: unknown; scheduling: Record<string, unknown> } };
    assert.equal(report.case_count, 10);
    const s = report.load.serving;
    for (const k of ['request_throughput', 'output_throughput', 'total_token_throughput', 'mean_ttft_ms', 'median_tpot_ms', 'std_itl_ms', 'p99_e2el_ms', 'p50_ttft_ms']) {
      assert.equal(typeof s[k], 'number', k);
    }
    assert.equal(s['p90_ttft_ms'], undefined); // only the percentiles asked for
    assert.equal(s.good_requests, 10);
    assert.equal(s.good_correct_requests, 8); // requests 3 and 7 ask "delta wrong" (cases cycle) and get a wrong answer
    assert.equal(report.load.request_rate, 40);
    // With -o the tables go to stdout.
    assert.match(r.stdout, /load: 10 requests at 40\/s/);
    assert.match(r.stdout, /TTFT ms/);
    const results = readFileSync(out.replace(/\.json$/, '.results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { record: string; meta?: { load?: unknown } });
    assert.equal(results.filter((l) => l.record === 'case' && l.meta?.load).length, 10);
    assert.ok(results.some((l) => l.record === 'load_energy'));
    // The block is rebuilt from the results file alone, identical to the run's.
    const file = readResultsFile(out.replace(/\.json$/, '.results.jsonl'));
    assert.deepEqual(loadBlockFromResults(file.header!, file.results, file.other), report.load);
  });

  it('a server that holds each request 120 ms under --max-concurrency 1: the wait for a slot is queue_ms, not lag, and the note blames the server (or the cap)', async () => {
    const out = join(dir, 'queued.json');
    // 8 requests at 50/s arrive over ~160 ms; one slot serves one every ~120 ms: the last waits ~700 ms.
    const args = ['run', '--suite', join(dir, 'hold.jsonl'), '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--no-history', '--idle-ms', '1'];
    const r = await cli([...args, '--request-rate', '50', '--num-requests', '8', '--max-concurrency', '1', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(out, 'utf8')) as { load: { scheduling: Record<string, number | boolean | null>; notes: string[] } };
    const g = report.load.scheduling;
    for (const k of ['mean_queue_ms', 'p50_queue_ms', 'p90_queue_ms', 'p99_queue_ms', 'max_queue_ms', 'mean_lag_ms', 'p50_lag_ms', 'p90_lag_ms', 'p99_lag_ms']) {
      assert.equal(typeof g[k], 'number', `${k}: ${JSON.stringify(g)}`);
    }
    assert.ok((g.queued_requests as number) >= 4, `requests waited for the slot: ${JSON.stringify(g)}`);
    assert.ok((g.p99_queue_ms as number) > 300, `the last requests waited for hundreds of ms: ${JSON.stringify(g)}`);
    // Lag is the client's own lateness only: a few ms on a busy machine, never the slot wait.
    assert.ok((g.p99_lag_ms as number) < 50, `p99 lag ${g.p99_lag_ms} ms counts the wait for a slot`);
    assert.match(report.load.notes.join('\n'), new RegExp(`${g.queued_requests} requests waited for a slot \\(p99 [\\d.]+ ms\\): the server \\(or the cap\\) limited the rate`));
    // "The client limited the rate" only from the client's own lateness (a starved shared machine can be
    // more than 10 ms late by itself; the slot wait never makes it so).
    assert.equal(report.load.notes.some((n) => /the client, not the server/.test(n)), g.client_bottleneck);
    assert.equal(g.client_bottleneck, (g.p99_lag_ms as number) > 10);
    // The terminal shows both figures.
    assert.match(r.stdout, /scheduling lag mean [\d.]+ ms, p50 [\d.]+, p90 [\d.]+, p99 [\d.]+ ms/);
    assert.match(r.stdout, /slot queue mean [\d.]+ ms, p50 [\d.]+, p90 [\d.]+, p99 [\d.]+ ms — \d+ requests waited for a slot: the server \(or the cap\) limited the rate/);
  });

  it('a load run measured over the whole run: its headline gives the total energy without calling it unknown', async () => {
    const out = join(dir, 'metered.json');
    const r = await cli([...base(), '--request-rate', 'inf', '--num-requests', '4', '--max-concurrency', '2', '--meter', 'estimate', '--active-watts', '10', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(out, 'utf8')) as { total_joules: number | null; energy_basis: string };
    assert.ok(report.total_joules !== null && report.total_joules > 0, `total ${report.total_joules}`);
    assert.equal(report.energy_basis, 'suite_window');
    const line = r.stdout.split('\n').find((l) => /^\s*total energy\s/.test(l)) ?? '';
    assert.match(line, /total energy\s+[\d.]+ m?J\s+\[estimate\] from the suite window/);
    assert.doesNotMatch(line, /unknown|no total/);
  });

  it('a list of rates runs one arm per rate and prints the curve', async () => {
    const out = join(dir, 'sweep.json');
    const r = await cli([...base(), '--request-rate', '50,inf', '--num-requests', '6', '--cooldown-s', '0', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const sweep = JSON.parse(r.stdout) as { format: string; rates: unknown[]; curve: { request_rate: unknown; request_throughput: number }[] };
    assert.equal(sweep.format, 'joulebench-rate-sweep/1');
    assert.deepEqual(sweep.rates, [50, 'inf']);
    assert.deepEqual(sweep.curve.map((p) => p.request_rate), [50, 'inf']);
    assert.ok(existsSync(join(dir, 'sweep.rate-50.json')) && existsSync(join(dir, 'sweep.rate-inf.json')));
    assert.match(r.stderr, /correct goodput/);
  });

  it('bad load flags are one line and exit 2; load-only flags without --request-rate are refused', async () => {
    for (const args of [
      ['--request-rate', '0'],
      ['--request-rate', 'fast'],
      ['--request-rate', '5', '--slo', 'ttft=5'],
      ['--request-rate', '5', '--slo', 'ttft_ms=-1'],
      ['--request-rate', '5', '--burstiness', '0'],
      ['--request-rate', '5', '--percentiles', '101'],
      ['--slo', 'ttft_ms=100'],
      ['--request-rate', '5', '--concurrency', '4'],
      ['--request-rate', '5', '--resume', join(dir, 'nothing.jsonl')],
    ]) {
      const r = await cli([...base(), ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    }
  });

  it('report rebuilds the run\'s own report from the file; a tampered meta.load is one line naming the file and key, never a number', async () => {
    const out = join(dir, 'tamper.json');
    const r = await cli([...base(), '--request-rate', 'inf', '--num-requests', '8', '--max-concurrency', '3', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const own = JSON.parse(readFileSync(out, 'utf8')) as { load: unknown };
    const file = out.replace(/\.json$/, '.results.jsonl');
    const rebuilt = await cli(['report', '--json', file]);
    assert.equal(rebuilt.code, 0, rebuilt.stderr);
    // The run's own report, its idle status included (read back from the load_energy line).
    assert.deepEqual(JSON.parse(rebuilt.stdout), own);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    const at = lines.findIndex((l) => l.includes('"load":{"request":'));
    const line = JSON.parse(lines[at]!) as { meta: { load: Record<string, unknown> } };
    const attacks: [string, (m: Record<string, unknown>) => void, RegExp][] = [
      ['a latency as a string', (m) => (m.e2e_ms = String(m.e2e_ms)), /meta\.load\.e2e_ms is not a finite number/],
      ['a chunk time that is not a number', (m) => (m.token_times_ms = [1, 'x']), /meta\.load\.token_times_ms\[1\] is not a finite number/],
      ['chunk times that are not a list', (m) => (m.token_times_ms = { 0: 1 }), /meta\.load\.token_times_ms is not an array/],
      ['a first token that is not a number', (m) => (m.first_content_ms = true), /meta\.load\.first_content_ms is neither null nor a finite number/],
      ['a missing send time', (m) => delete m.sent_at_ms, /meta\.load\.sent_at_ms is not a finite number/],
      ['a negative request number', (m) => (m.request = -1), /meta\.load\.request is not a whole number/],
      ['a fractional chunk count', (m) => (m.content_chunks = 1.5), /meta\.load\.content_chunks is not a whole number/],
    ];
    // meta.load falsy, or gone with its meta: every scored line of a load run is a request.
    for (const [what, edit] of [
      ['meta.load 0', { meta: { ...line.meta, load: 0 } }],
      ['meta.load false', { meta: { ...line.meta, load: false } }],
      ['meta.load null', { meta: { ...line.meta, load: null } }],
      ['no meta.load', { meta: { e2e_ms: 1 } }],
      ['no meta', { meta: undefined }],
    ] as const) {
      const bad = join(dir, 'tampered.results.jsonl');
      writeFileSync(bad, [...lines.slice(0, at), JSON.stringify({ ...line, ...edit }), ...lines.slice(at + 1)].join('\n') + '\n');
      const t = await cli(['report', '--json', bad]);
      assert.equal(t.code, 2, `${what}: ${t.stderr}`);
      assert.equal(t.stderr.trim().split('\n').length, 1, `${what}: ${t.stderr}`);
      assert.match(t.stderr, /tampered\.results\.jsonl: (a case line: meta\.load is not an object|scored pass \d+ case \d+ has no meta\.load, which every request of a load run carries)/, what);
    }
    // meta.load itself not an object.
    for (const load of ['fast', [1, 2], 7]) {
      const bad = join(dir, 'tampered.results.jsonl');
      writeFileSync(bad, [...lines.slice(0, at), JSON.stringify({ ...line, meta: { ...line.meta, load } }), ...lines.slice(at + 1)].join('\n') + '\n');
      const t = await cli(['report', '--json', bad]);
      assert.equal(t.code, 2, `${JSON.stringify(load)}: ${t.stderr}`);
      assert.match(t.stderr, /a case line: meta\.load is not an object/);
    }
    for (const [what, tamper, message] of attacks) {
      const m = structuredClone(line.meta.load);
      tamper(m);
      const bad = join(dir, 'tampered.results.jsonl');
      writeFileSync(bad, [...lines.slice(0, at), JSON.stringify({ ...line, meta: { ...line.meta, load: m } }), ...lines.slice(at + 1)].join('\n') + '\n');
      const t = await cli(['report', '--json', bad]);
      assert.equal(t.code, 2, `${what}: ${t.stderr}`);
      assert.equal(t.stderr.trim().split('\n').length, 1, `${what}: ${t.stderr}`);
      assert.match(t.stderr, /tampered\.results\.jsonl/, what);
      assert.match(t.stderr, message, what);
      assert.equal(t.stdout, '', what);
    }
    // The header's load settings: what the serving block is computed with.
    const head = JSON.parse(lines[0]!) as { load: Record<string, unknown> };
    const headerAttacks: [string, Record<string, unknown> | unknown[], RegExp][] = [
      ['no settings at all', {}, /header key load\.request_rate must be a number > 0 or "inf"/],
      ['settings as a list', [], /header key load must be an object/],
      ['percentiles as text', { ...head.load, percentiles: 'abc' }, /header key load\.percentiles must be a list of numbers in \(0, 100\]/],
      ['a request count as text', { ...head.load, num_requests: 'x' }, /header key load\.num_requests must be a whole number >= 1/],
      ['an SLO as text', { ...head.load, slo: { ttft_ms: 'x' } }, /header key load\.slo\.ttft_ms must be a number of ms > 0/],
      ['an SLO of its own', { ...head.load, slo: { speed: 5 } }, /header key load\.slo\.speed must be absent/],
      ['a TTFT token of its own', { ...head.load, ttft_token: 'first' }, /header key load\.ttft_token must be "content" or "any"/],
    ];
    for (const [what, load, message] of headerAttacks) {
      const bad = join(dir, 'tampered.results.jsonl');
      writeFileSync(bad, [JSON.stringify({ ...head, load }), ...lines.slice(1)].join('\n') + '\n');
      const t = await cli(['report', '--json', bad]);
      assert.equal(t.code, 2, `${what}: ${t.stderr}`);
      assert.equal(t.stderr.trim().split('\n').length, 1, `${what}: ${t.stderr}`);
      assert.match(t.stderr, message, what);
    }
    // The load_energy line: the run's window and idle calibration, which the rebuilt report uses too.
    const e = lines.findIndex((l) => l.startsWith('{"record":"load_energy"'));
    const energy = JSON.parse(lines[e]!) as Record<string, unknown>;
    const energyAttacks: [string, Record<string, unknown>, RegExp][] = [
      ['an idle status of its own', { idle: { status: 'warm', watts: null } }, /load_energy line's idle\.status is not one of/],
      ['idle watts as a string', { idle: { status: 'measured', watts: '40' } }, /idle\.watts is neither null nor a finite number/],
      ['run joules as a string', { run: { joules: '5', source: 'rapl', window_ms: 10, below_floor: false } }, /run\.joules is neither null nor a finite number/],
      ['a run window without its length', { run: { joules: 5, source: 'rapl', below_floor: false } }, /run\.window_ms is not a finite number/],
    ];
    for (const [what, patch, message] of energyAttacks) {
      const bad = join(dir, 'tampered.results.jsonl');
      writeFileSync(bad, [...lines.slice(0, e), JSON.stringify({ ...energy, ...patch }), ...lines.slice(e + 1)].join('\n') + '\n');
      const t = await cli(['report', '--json', bad]);
      assert.equal(t.code, 2, `${what}: ${t.stderr}`);
      assert.equal(t.stderr.trim().split('\n').length, 1, `${what}: ${t.stderr}`);
      assert.match(t.stderr, message, what);
    }
  });
});
