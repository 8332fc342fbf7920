import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadSuite } from '../../src/suites/loader.js';
import { promptOf } from '../../src/suites/prompt.js';
import { readResultsFile } from '../../src/runner/results-stream.js';
import { crossProduct, parsePlan, planDifferences } from '../../src/sweep/plan.js';
import { compareSweep, loadSweep } from '../../src/sweep/load.js';
import { BIN, cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-sweep-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// Two "models" behind one OpenAI-compatible server: `good` answers every router question, `bad` only
// the even ones. Requests are counted per model, so a re-asked question shows.
const router = loadSuite('router');
const answerOf = new Map(router.cases.map((c, i) => [promptOf(c), { expected: c.expected ?? 'no idea', i }]));
let server: FakeServer;
let slow = 0;
const asked: Record<string, number> = {};
before(async () => {
  server = await startFakeOpenAI((req) => {
    const model = String(req.body.model);
    const prompt = String((req.body.messages as { content: string }[])[0]?.content ?? '');
    asked[model] = (asked[model] ?? 0) + 1;
    const a = answerOf.get(prompt);
    const text = !a ? 'no idea' : model === 'good' || a.i % 2 === 0 ? `The answer is ${a.expected}.` : 'I do not know.';
    return slow > 0 ? { kind: 'stream', text, chunkDelay_ms: slow } : { kind: 'plain', text };
  });
});
after(() => server.close());

function plan(name: string, extra = ''): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(
    path,
    `name: ${name}
suites: [router]
baseline: ref
arms:
  - name: ref
    kind: cascade
    meter: model
  - name: cascade
    kind: cascade
    meter: model
    matrix:
      cache_capacity: [1, 1024]
      neural.energy_j: [20]
  - name: api
    kind: openai
    endpoint: ${server.url}
    meter: model
    prices: { input_usd_per_mtok: 1, output_usd_per_mtok: 2 }
    matrix:
      model: [good, bad]
${extra}`,
  );
  return path;
}

describe('sweep plans', () => {
  it('expand matrices into named arms (cross product, dotted keys), and refuse what is wrong naming the key', () => {
    assert.deepEqual(crossProduct({ a: [1, 2], b: ['x'] }), [{ a: 1, b: 'x' }, { a: 2, b: 'x' }]);
    const p = parsePlan({ name: 'p', suites: ['mt'], arms: [{ name: 'c', kind: 'cascade', matrix: { cache_capacity: [1, 2], 'neural.energy_j': [5] } }] }, 'p.yaml');
    assert.deepEqual(p.arms.map((a) => a.name), ['c-cache_capacity=1-neural.energy_j=5', 'c-cache_capacity=2-neural.energy_j=5']);
    assert.deepEqual(p.arms[0]!.neural, { energy_j: 5 });
    assert.throws(() => parsePlan({ name: 'p', suites: ['mt'], arms: [{ name: 'a', kind: 'nosuch' }] }, 'p.yaml'), /^JoulebenchError: p.yaml: arms.0.kind must be one of/);
    assert.throws(() => parsePlan({ name: 'p', suites: ['mt'], arms: [{ name: 'a', kind: 'cascade' }], baseline: 'zzz' }, 'p.yaml'), /baseline: no arm named "zzz"/);
    assert.throws(() => parsePlan({ name: 'p', suites: ['mt'], arms: [{ name: 'a', kind: 'cascade' }, { name: 'a', kind: 'echo' }] }, 'p.yaml'), /two arms are named "a"/);
    assert.throws(() => parsePlan({ name: 'p', suites: [], arms: [] }, 'p.yaml'), /suites must name at least one suite/);
    assert.deepEqual(planDifferences({ a: 1, arms: [{ m: 'x' }, { m: 'y' }] }, { a: 1, arms: [{ m: 'x' }, { m: 'z' }] }), ['arms[1].m']);
  });
});

describe('joulebench sweep (spawned)', () => {
  it('runs 5 arms (reference cascades with other cache capacities and neural energies, two served models) and compares them', async () => {
    const out = join(dir, 'full');
    for (const k of Object.keys(asked)) delete asked[k];
    const r = await cli(['sweep', plan('full'), '--out-dir', out, '--no-idle', '--bootstrap', '500']);
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(r.stdout);
    const s = c.suites[0];
    assert.deepEqual(s.arms.map((a: { arm: string }) => a.arm), ['ref', 'cascade-cache_capacity=1-neural.energy_j=20', 'cascade-cache_capacity=1024-neural.energy_j=20', 'api-model=good', 'api-model=bad']);
    // Every arm × suite is an ordinary run with its report, results and receipt; the receipt names the sweep.
    for (const a of s.arms) {
      for (const f of ['router.json', 'router.results.jsonl', 'router.receipt.json']) assert.ok(existsSync(join(out, a.arm, f)), `${a.arm}/${f}`);
      const receipt = JSON.parse(readFileSync(join(out, a.arm, 'router.receipt.json'), 'utf8'));
      assert.equal(receipt.labels.sweep_id, c.sweep.id);
      assert.equal(receipt.labels.arm, a.arm);
    }
    assert.deepEqual(asked, { good: 30, bad: 30 });
    const row = (arm: string) => s.arms.find((a: { arm: string }) => a.arm === arm);
    assert.equal(row('api-model=good').accuracy_pct, 100);
    assert.ok(row('api-model=bad').accuracy_pct < 60);
    assert.equal(row('ref').accuracy_ci.method, 'wilson');
    // The cheaper neural stage is on the energy frontier; the API arms (energy unknown) are not placed.
    assert.ok(s.frontiers.energy.frontier.includes('cascade-cache_capacity=1024-neural.energy_j=20'));
    assert.ok(s.frontiers.energy.not_placed.some((n: { arm: string }) => n.arm === 'api-model=good'));
    // Against the baseline: the 20 J neural stage is better on J/correct, significantly; a same-accuracy arm is "no detectable change".
    const vs = (arm: string) => s.vs_baseline.find((v: { arm: string }) => v.arm === arm);
    assert.equal(vs('cascade-cache_capacity=1024-neural.energy_j=20').joules_per_correct_verdict, 'better');
    assert.equal(vs('cascade-cache_capacity=1024-neural.energy_j=20').accuracy_verdict, 'no detectable change');
    assert.equal(vs('api-model=bad').accuracy_verdict, 'worse');
    assert.ok(existsSync(join(out, 'comparison.json')));
    // `report DIR` recomputes the comparison with the sweep's own settings (--bootstrap 500 here), not the defaults.
    assert.deepEqual(compareSweep(loadSweep(out)), JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8')));
    assert.match(r.stderr, /against the baseline ref \(paired\)/);
    // Each run is a row in the history with the sweep's id.
    const h = await cli(['history', '--sweep', c.sweep.id, '--json']);
    assert.equal(h.code, 0, h.stderr);
    const rows = JSON.parse(h.stdout) as { sweep_id: string; target: string }[];
    assert.equal(rows.length, 5);
    assert.ok(rows.every((x) => x.sweep_id === c.sweep.id));
  });

  it('SIGKILL mid-sweep, then --resume: no case lost or duplicated, finished arms not asked again', async () => {
    const out = join(dir, 'killed');
    for (const k of Object.keys(asked)) delete asked[k];
    slow = 15; // streamed answers take a while, so the kill lands inside the `bad` arm
    const p = plan('killed');
    const child = spawn(process.execPath, [BIN, 'sweep', p, '--out-dir', out, '--no-idle', '--no-history', '--bootstrap', '200', '-q'], { env: { ...process.env, NO_COLOR: '1' }, stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((ok) => child.on('exit', (_c, sig) => ok(sig)));
    while ((asked.bad ?? 0) < 8) await new Promise((ok) => setTimeout(ok, 5));
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
    slow = 0;
    const goodBefore = asked.good;
    const badBefore = readResultsFile(join(out, 'api-model=bad', 'router.results.jsonl')).results.length;
    assert.equal(goodBefore, 30);
    assert.ok(badBefore > 0 && badBefore < 30, `killed inside the bad arm (${badBefore} on disk)`);

    // A changed plan is refused, naming the key.
    const changed = join(dir, 'changed.yaml');
    writeFileSync(changed, readFileSync(p, 'utf8').replace('[good, bad]', '[good, worse]'));
    const refused = await cli(['sweep', changed, '--resume', out, '--no-history']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /changed since the sweep .* started \(arms\[4\]\.model, arms\[4\]\.name\)/);

    const r = await cli(['sweep', '--resume', out, '--no-idle', '--no-history', '--bootstrap', '200']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /finished before api-model=good × router/);
    assert.match(r.stderr, /resume api-model=bad × router/);
    assert.equal(asked.good, 30, 'the finished arm was asked again');
    const bad = readResultsFile(join(out, 'api-model=bad', 'router.results.jsonl')).results;
    const ids = bad.map((x) => x.case_id);
    assert.equal(ids.length, 30);
    assert.equal(new Set(ids).size, 30, 'a case is duplicated');
    // Every bad-arm question asked exactly once, except the one in flight at the kill (asked again).
    assert.ok(asked.bad! >= 30 && asked.bad! <= 31, `bad asked ${asked.bad} times`);
    const c = JSON.parse(r.stdout);
    assert.equal(c.missing.length, 0);
  });
});
