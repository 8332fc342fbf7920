import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-power-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const header = (digest: string) =>
  JSON.stringify({ record: 'header', format: 'joulebench-results/1', suite: 'pw', suite_version: '1', suite_digest: digest, target: 'echo', config_digest: 'sha256:' + 'c'.repeat(64), warmup: 0, repeats: 1, meter: 'rapl', cases: 40, concurrency: 1 });
const line = (i: number, passed: boolean, joules: number | null, latency: number) =>
  JSON.stringify({ record: 'case', phase: 'scored', pass: 0, index: i, case_id: `c${i}`, dataset: 'pw', response: 'x', stage: null, expected: 'x', passed, score: null, weight: 1, joules, energy_source: 'rapl', below_floor: false, latency_ms: latency, ttft_ms: null, tpot_ms: null, prompt_tokens: null, completion_tokens: null, cost_usd: 0, attempts: 1, retry_overhead_ms: 0, error: null });

const D = 'sha256:' + 'd'.repeat(64);
// 40 cases, 24 right (60 %); joules 10 + (i mod 5) × 2 (mean 14, SD of that pattern); 500 ms each.
const joulesOf = (i: number) => 10 + (i % 5) * 2;
function write(name: string, digest: string, passed: (i: number) => boolean, joules: (i: number) => number | null): string {
  const path = join(dir, name);
  writeFileSync(path, [header(digest), ...Array.from({ length: 40 }, (_, i) => line(i, passed(i), joules(i), 500))].join('\n') + '\n');
  return path;
}
const pilot = write('pilot.results.jsonl', D, (i) => i < 24, joulesOf);

describe('joulebench power', () => {
  it("one pilot: Connor's n under independence and the paired-t n from σ·√2, with time and joules at the pilot's rates", async () => {
    const r = await cli(['power', pilot, '--accuracy-pp', '10', '--joules-pct', '10', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const p = JSON.parse(r.stdout);
    // ψ = 0.6·0.3 + 0.7·0.4 = 0.46, δ = 0.1: n = ⌈(1.959964·√0.46 + 0.841621·√0.45)² / 0.01⌉, worked here.
    const za = 1.959963984540054;
    const zb = 0.8416212335729143;
    const nAcc = Math.ceil((za * Math.sqrt(0.46) + zb * Math.sqrt(0.45)) ** 2 / 0.01);
    assert.equal(p.rows[0].cases, nAcc);
    // σ of 10, 12, 14, 16, 18 repeated 8 times (n − 1 denominator), σ_d = σ√2, Δ = 10 % of 14 J.
    const xs = Array.from({ length: 40 }, (_, i) => joulesOf(i));
    const sd = Math.sqrt(xs.reduce((a, x) => a + (x - 14) ** 2, 0) / 39) * Math.SQRT2;
    const nJ = Math.ceil(((za + zb) * sd / 1.4) ** 2 + (za * za) / 2);
    assert.equal(p.rows[1].cases, nJ);
    assert.equal(p.cases_needed, Math.max(nAcc, nJ));
    assert.equal(p.seconds_per_system, (Math.max(nAcc, nJ) * 500) / 1000);
    assert.equal(p.joules_per_system, Math.max(nAcc, nJ) * 14);
    const t = await cli(['power', pilot, '--accuracy-pp', '10', '--joules-pct', '10']);
    assert.equal(t.code, 0, t.stderr);
    assert.match(t.stdout, new RegExp(`accuracy 10 pp\\s+${nAcc}\\s+McNemar`));
    assert.match(t.stdout, /assumed: independent outcomes at 60 % and 70 %/);
  });

  it('a candidate pilot: the observed discordance and SD of differences', async () => {
    // Candidate right on 0–27 but wrong on 0–1: discordant 2 + 4 = 6 of 40 (ψ = 0.15); joules 1 J lower on even cases.
    const cand = write('cand.results.jsonl', D, (i) => i >= 2 && i < 28, (i) => joulesOf(i) - (i % 2 === 0 ? 1 : 0));
    const r = await cli(['power', pilot, cand, '--accuracy-pp', '5', '--joules-pct', '5', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const p = JSON.parse(r.stdout);
    assert.equal(p.paired_pilot, true);
    const za = 1.959963984540054;
    const zb = 0.8416212335729143;
    assert.equal(p.rows[0].cases, Math.ceil((za * Math.sqrt(0.15) + zb * Math.sqrt(0.15 - 0.0025)) ** 2 / 0.0025));
    const sdDiff = Math.sqrt((40 * 0.25) / 39);
    assert.equal(p.rows[1].cases, Math.ceil(((za + zb) * sdDiff / 0.7) ** 2 + (za * za) / 2));
  });

  it('refuses what it cannot plan from: one line, exit 2', async () => {
    const other = write('other.results.jsonl', 'sha256:' + 'e'.repeat(64), () => true, joulesOf);
    const cases: [string[], RegExp][] = [
      [['power', pilot], /--accuracy-pp D and\/or --joules-pct P/],
      [['power', pilot, '--accuracy-pp', '0'], /--accuracy-pp.*must be numbers > 0/],
      [['power', pilot, '--joules-pct', '5', '--power', '1'], /--power.*between 0 and 1/],
      [['power', pilot, other, '--accuracy-pp', '5'], /suite digest differs/],
      [['power', join(dir, 'missing.jsonl'), '--accuracy-pp', '5'], /missing\.jsonl/],
    ];
    for (const [args, msg] of cases) {
      const r = await cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, msg);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  });

  it('unknown or constant energy: no joules plan, with the reason, never a made-up n', async () => {
    const flat = write('flat.results.jsonl', D, (i) => i < 24, () => 50);
    const r = await cli(['power', flat, '--joules-pct', '5', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const p = JSON.parse(r.stdout);
    assert.equal(p.rows[0].cases, null);
    assert.match(p.rows[0].reason, /does not vary/);
    assert.equal(p.cases_needed, null);
  });
});
