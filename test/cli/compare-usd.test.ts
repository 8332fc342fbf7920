import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-compare-usd-'));
const N = 40;
let server: FakeServer;

// Two models behind one OpenAI-compatible server: `cheap` answers every question in a few tokens;
// `dear` answers in about three times the tokens and misses every tenth question.
before(async () => {
  server = await startFakeOpenAI((req) => {
    const prompt = String((req.body.messages as { content: string }[])[0]?.content ?? '');
    const i = Number(/q(\d+)/.exec(prompt)?.[1] ?? 0);
    const dear = req.body.model === 'dear';
    return {
      kind: 'plain',
      text: dear && i % 10 === 0 ? 'no idea' : `a${i}`,
      usage: { prompt_tokens: 20 + (i % 7), completion_tokens: (dear ? 3 : 1) * (4 + (i % 5)) },
    };
  });
  writeFileSync(join(dir, 'suite.json'), JSON.stringify({ name: 'usd', cases: Array.from({ length: N }, (_, i) => ({ id: `c${i}`, prompt: `q${i}?`, expected: `a${i}` })) }));
  const prices = 'prices:\n  input_usd_per_mtok: 1\n  output_usd_per_mtok: 4\n';
  const run = async (name: string, model: string, priced: boolean) => {
    writeFileSync(join(dir, `${name}.yaml`), `target:\n  kind: openai\n  endpoint: "${server.url}"\n  model: ${model}\n  stream: false\n${priced ? prices : ''}`);
    const r = await cli(['run', '--suite', 'suite.json', '--config', `${name}.yaml`, '--warmup', '0', '--no-idle', '--no-history', '-o', `${name}.json`, '-q'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
  };
  await run('base', 'cheap', true);
  await run('cand', 'dear', true);
  await run('unpriced', 'cheap', false);
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const compare = (...args: string[]) => cli(['compare', ...args], { cwd: dir });
const report = (name: string) => JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8'));

describe('compare in dollars (two priced runs against a server on 127.0.0.1)', () => {
  it('--json: $/correct and total $ as % change, each with a paired bootstrap interval and a verdict', async () => {
    const r = await compare('base.json', 'cand.json', '--json', '-q');
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(r.stdout);
    const [b, k] = [report('base'), report('cand')];
    assert.ok(b.usd_per_correct > 0 && k.usd_per_correct > b.usd_per_correct);
    assert.equal(c.baseline.usd_per_correct, b.usd_per_correct);
    assert.equal(c.candidate.total_usd, k.total_usd);
    assert.equal(c.usd_per_correct_pct, Math.round(((k.usd_per_correct - b.usd_per_correct) * 100 * 1e4) / b.usd_per_correct) / 1e4);
    assert.equal(c.total_usd_pct, Math.round(((k.total_usd - b.total_usd) * 100 * 1e4) / b.total_usd) / 1e4);
    for (const key of ['usd_per_correct_ratio_ci95', 'total_usd_ratio_ci95']) {
      assert.equal(c[key].method, 'paired-bootstrap', key);
      assert.ok(c[key].low > 1, `${key}: the dear model costs more, interval [${c[key].low}, ${c[key].high}]`);
    }
    assert.deepEqual([c.significant.usd_per_correct_pct, c.significant.total_usd_pct], [true, true]);
    assert.ok(c.gate_intervals.usd_per_correct_pct.low > 0);
  });

  it('the gate: usd_per_correct_pct and total_usd_pct trip (exit 1) or pass (exit 0), plain and --significant', async () => {
    const tripped = await compare('base.json', 'cand.json', '-q', '--fail-on', 'usd_per_correct_pct>5');
    assert.equal(tripped.code, 1, tripped.stderr);
    assert.match(tripped.stderr, /gate failed: usd_per_correct_pct>5: usd_per_correct_pct is [\d.]+/);
    const sig = await compare('base.json', 'cand.json', '-q', '--fail-on', 'total_usd_pct>5', '--significant');
    assert.equal(sig.code, 1, sig.stderr);
    assert.match(sig.stderr, /total_usd_pct is [\d.]+ and its whole 95 % interval/);
    const passed = await compare('base.json', 'cand.json', '--fail-on', 'usd_per_correct_pct>1000,total_usd_pct>1000');
    assert.equal(passed.code, 0, passed.stderr);
    assert.match(passed.stderr, /gate passed: usd_per_correct_pct>1000, total_usd_pct>1000/);
    const better = await compare('cand.json', 'base.json', '-q', '--fail-on', 'usd_per_correct_pct>0', '--significant');
    assert.equal(better.code, 0, better.stderr);
  });

  it('the terminal shows each change with its interval, the p-value where one applies, and a plain verdict', async () => {
    const r = await compare('base.json', 'cand.json');
    assert.equal(r.code, 0, r.stderr);
    const line = (metric: string) => r.stderr.split('\n').find((l) => l.trimStart().startsWith(metric)) ?? '';
    assert.match(r.stderr, /metric +baseline +candidate +change +95 % interval +p +verdict \(α = 0\.05\)/);
    assert.match(line('$ / correct'), /\+[\d.]+ % +\(lower is better\) +\[\+[\d.]+ %, \+[\d.]+ %\] +worse$/);
    assert.match(line('total $'), /\[\+[\d.]+ %, \+[\d.]+ %\] +worse$/);
    // 4 of 40 missed, none gained: McNemar's exact p = 2 · 0.5^4 = 0.125, printed to two digits.
    assert.match(line('accuracy'), /-10\.00 pp +\(higher is better\) +\[-[\d.]+ pp, [-+]?[\d.]+ pp\] +0\.13 +no detectable change$/);
    assert.match(r.stderr, /Paired over 40 results/);
    const md = await compare('base.json', 'cand.json', '--md');
    assert.match(md.stdout, /\| \$ \/ correct \| \$[\d.e-]+ \| \$[\d.e-]+ \| \+[\d.]+ % \| lower \| \[\+[\d.]+ %, \+[\d.]+ %\] \| worse \|/);
    assert.match(md.stdout, /\| total \$ \|.*\| worse \|/);
  });

  it('a run with no prices has no $ figures: null changes, and a gate on them names the run that lacks them', async () => {
    const r = await compare('base.json', 'unpriced.json', '--json');
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(r.stdout);
    assert.equal(report('unpriced').total_usd, null);
    assert.deepEqual([c.usd_per_correct_pct, c.total_usd_pct, c.usd_per_correct_ratio_ci95, c.significant.usd_per_correct_pct], [null, null, null, null]);
    assert.equal(c.paired.usd_per_correct_ratio.reason, 'cost unknown for some paired cases');
    assert.match(r.stderr.split('\n').find((l) => l.trimStart().startsWith('$ / correct')) ?? '', /n\/a +n\/a/);
    assert.match(r.stderr, /\$ \/ correct: no interval \(cost unknown for some paired cases\)/);
    const g = await compare('unpriced.json', 'base.json', '-q', '--fail-on', 'usd_per_correct_pct>5,total_usd_pct>5');
    assert.equal(g.code, 1);
    assert.match(g.stderr, /usd_per_correct_pct is n\/a \(the baseline has no usd_per_correct\), so the gate cannot pass/);
    assert.match(g.stderr, /total_usd_pct is n\/a \(the baseline has no total_usd\)/);
  });
});
