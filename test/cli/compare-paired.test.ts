import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { mcnemar } from '../../src/stats/index.js';
import { cli } from '../helpers/cli.js';
import { result } from '../helpers/results.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-compare-paired-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A finished results file: header, one line per case, end record. */
function resultsFile(name: string, n: number, f: (i: number) => { passed: boolean; joules: number; latency_ms: number }, digest = 'sha256:paired'): string {
  const header = { record: 'header', format: 'joulebench-results/1', suite: 's', suite_version: '1', suite_digest: digest, target: name, config_digest: 'sha256:c', warmup: 0, repeats: 1, meter: 'model', concurrency: 1 };
  const lines = [JSON.stringify(header)];
  for (let i = 0; i < n; i++) lines.push(JSON.stringify(result({ index: i, case_id: `c${i}`, ...f(i) })));
  lines.push(JSON.stringify({ record: 'end', scored: n }));
  const path = join(dir, `${name}.results.jsonl`);
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

/** A deterministic pseudo-random number in [0, 1) per (i, salt). */
const noise = (i: number, salt: number) => (((Math.sin(i * 12.9898 + salt * 78.233) * 43758.5453) % 1) + 1) % 1;

describe('compare, paired', () => {
  it('--json: McNemar p from the discordant counts, intervals, and a verdict per figure', async () => {
    // Baseline right on every case, candidate on even cases only: 0 vs 20 discordant.
    const a = resultsFile('good', 40, (i) => ({ passed: true, joules: 2 + noise(i, 1), latency_ms: 10 + i }));
    const b = resultsFile('bad', 40, (i) => ({ passed: i % 2 === 0, joules: 2 + noise(i, 2), latency_ms: 10 + i }));
    const r = await cli(['compare', a, b, '--json', '-q']);
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(r.stdout);
    assert.equal(c.accuracy_pp_delta, -50);
    assert.equal(c.accuracy_p_value, mcnemar(20, 0).p_value);
    assert.equal(c.accuracy_p_value, 2 * 2 ** -20);
    assert.equal(c.significant.accuracy_pp_delta, true);
    assert.equal(c.accuracy_pp_delta_ci95.method, 'paired-bootstrap');
    assert.ok(c.accuracy_pp_delta_ci95.high < 0);
    assert.equal(c.joules_per_correct_ratio_ci95.level, 0.95);
    assert.ok(c.joules_per_correct_ratio_ci95.low > 1, 'half the answers for the same energy: J/correct about doubles');
    assert.deepEqual(c.latency_p95_ms_delta_ci95.low, 0);
    assert.equal(c.significant.latency_p95_pct, false);
    assert.equal(c.paired.pairs, 40);
    assert.equal(c.paired_reason, null);
  });

  it('the gate: a 3 % J/correct rise on 38 noisy cases trips plain --fail-on, not --fail-on --significant', async () => {
    const a = resultsFile('base', 38, (i) => ({ passed: true, joules: 5 + 4 * noise(i, 3), latency_ms: 10 }));
    const b = resultsFile('cand', 38, (i) => ({ passed: true, joules: 1.03 * (5 + 4 * noise(i, 4)), latency_ms: 10 }));
    const plain = await cli(['compare', a, b, '-q', '--fail-on', 'joules_per_correct_pct>1']);
    const c = JSON.parse(plain.stdout);
    assert.ok(c.joules_per_correct_pct > 1, `the point estimate crosses the threshold (${c.joules_per_correct_pct})`);
    assert.equal(plain.code, 1, 'without --significant the point estimate trips the gate');
    const sig = await cli(['compare', a, b, '-q', '--fail-on', 'joules_per_correct_pct>1', '--significant']);
    assert.equal(sig.code, 0, sig.stderr);
    assert.ok(c.gate_intervals.joules_per_correct_pct.low < 1);

    // A real regression (+60 %) trips it with --significant too, naming the interval.
    const worse = resultsFile('worse', 38, (i) => ({ passed: true, joules: 1.6 * (5 + 4 * noise(i, 4)), latency_ms: 10 }));
    const tripped = await cli(['compare', a, worse, '-q', '--fail-on', 'joules_per_correct_pct>1', '--significant']);
    assert.equal(tripped.code, 1);
    assert.match(tripped.stderr, /whole 95 % interval \[[\d.]+, [\d.]+\] is past 1/);
  });

  it('--md shows each delta with its interval and a plain verdict', async () => {
    const a = resultsFile('m1', 40, (i) => ({ passed: true, joules: 3 + noise(i, 5), latency_ms: 20 }));
    const b = resultsFile('m2', 40, (i) => ({ passed: i % 2 === 0, joules: 3 + noise(i, 5), latency_ms: 20 }));
    const r = await cli(['compare', a, b, '--md']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\| accuracy \|.*\| worse \|/);
    assert.match(r.stdout, /\| latency p95 \|.*\| no detectable change \|/);
    assert.match(r.stdout, /McNemar p = /);
    assert.match(r.stdout, /95 % interval of the change/);
  });

  it('runs over different questions get no intervals, with the reason; --significant then fails the gate', async () => {
    const a = resultsFile('d1', 10, () => ({ passed: true, joules: 1, latency_ms: 1 }), 'sha256:one');
    const b = resultsFile('d2', 10, () => ({ passed: true, joules: 1, latency_ms: 1 }), 'sha256:two');
    const r = await cli(['compare', a, b, '-q', '--force', '--fail-on', 'joules_per_correct_pct>5', '--significant']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no interval for joules_per_correct_pct \(runs not paired\)/);
    const bad = await cli(['compare', a, b, '--significant']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--significant applies to --fail-on/);
    const alpha = await cli(['compare', a, a, '--alpha', '1.5']);
    assert.equal(alpha.code, 2);
  });
});
