import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CaseLineScanner, SCANNED_FIELDS } from '../../src/report/case-scan.js';
import { caseLine } from '../../src/runner/case-line.js';
import type { CaseResult } from '../../src/core/types.js';
import { seededRng } from '../../src/stats/rng.js';
import { checkCaseLine } from '../../src/runner/case-check.js';

const rng = seededRng('case-scan-fuzz');
const pick = <T>(xs: readonly T[]): T => xs[rng.below(xs.length)]!;
const chance = (p: number) => rng.below(1e6) < p * 1e6;

/** Numbers of every shape a line may hold: integers, µ-units, full doubles, tiny, huge, negative. */
function randomNumber(): number {
  switch (rng.below(9)) {
    case 0: return rng.below(10);
    case 1: return rng.below(1e9);
    case 2: return rng.below(1e9) / 1e3;
    case 3: return rng.below(1e9) / 1e6;
    case 4: return (rng.nextU32() / 2 ** 32) * 10 ** (rng.below(40) - 20);
    case 5: return -(rng.nextU32() / 2 ** 32) * 1000;
    case 6: return pick([0.1 + 0.2, 1e21, 1e-7, 123456789012345680000, 5e-324, 1.7976931348623157e308, -0, 2 ** 53, 2 ** 53 + 2]);
    case 7: return rng.nextU32() * 2 ** 21 + rng.below(2 ** 21);
    default: return Number((rng.nextU32() / 97).toPrecision(1 + rng.below(17)));
  }
}
const orNull = <T>(v: T): T | null => (chance(0.2) ? null : v);
const STR = ['router', 'mmlu-abstract_algebra', 'x', 'héllo ✓ 𝄞', 'tab\there', 'quote"s', 'back\\slash', '\u0001', 'line\nbreak', ''];

function randomCase(): CaseResult {
  const r: CaseResult = {
    record: 'case',
    phase: pick(['scored', 'warmup'] as const),
    pass: rng.below(3),
    index: rng.below(1e6),
    case_id: pick(STR),
    dataset: chance(0.9) ? pick(STR.slice(0, 3)) : pick(STR),
    response: orNull(pick(STR)),
    stage: orNull(pick(['cache', 'kv', 'graph', 'neural', 'weird stage', 'esc\\aped'])),
    expected: orNull(pick(STR)),
    passed: orNull(chance(0.5)),
    score: orNull(randomNumber()),
    weight: randomNumber(),
    joules: orNull(randomNumber()),
    energy_source: pick(['model', 'rapl', 'nvml', 'estimate', 'none', 'model:api', 'mixed'] as const),
    below_floor: chance(0.1),
    latency_ms: randomNumber(),
    ttft_ms: orNull(randomNumber()),
    tpot_ms: orNull(randomNumber()),
    prompt_tokens: orNull(rng.below(5000)),
    completion_tokens: orNull(rng.below(5000)),
    cost_usd: orNull(randomNumber()),
    attempts: 1 + rng.below(3),
    retry_overhead_ms: randomNumber(),
    error: chance(0.05) ? { code: 'E_TARGET', message: 'boom' } : null,
  };
  if (chance(0.4)) r.trace = Array.from({ length: rng.below(5) }, () => ({ stage: pick(['cache', 'kv', 'graph', 'neural']), hit: chance(0.5), energy_uj: orNull(randomNumber()) }));
  if (chance(0.05)) r.meta = { load: { request: 1 } };
  else if (chance(0.02)) r.meta = { judge: { rating: 7 } };
  else if (chance(0.2)) r.meta = randomMeta();
  if (chance(0.1)) r.joules_range = { low: randomNumber(), high: randomNumber() };
  if (chance(0.15)) r.by_domain = { 'package-0': { joules: orNull(randomNumber()), source: 'rapl' }, dram: { joules: null, source: 'none' }, [pick(STR)]: { joules: randomNumber(), source: 'nvml' } };
  return r;
}

/** A target's facts: flat (an HTTP target's), nested, with odd keys and every kind of value. */
function randomMeta(): Record<string, unknown> {
  switch (rng.below(4)) {
    case 0: return { e2e_ms: randomNumber(), streamed: chance(0.5), j_per_output_token: orNull(randomNumber()), output_tokens_per_j: null };
    case 1: return { [pick(STR)]: pick(STR), n: randomNumber(), ok: chance(0.5), none: null };
    case 2: return { model: 'x', usage: { tokens: [1, 2, { deep: [null, true, 'é'] }], nested: { a: { b: { c: [] } } } }, empty: {}, list: [] };
    default: return {};
  }
}

/** The scanned fields, as JSON.parse gives them (trace entries copied out of the reused objects). */
function fieldsOf(r: CaseResult): Record<string, unknown> {
  return Object.fromEntries(SCANNED_FIELDS.map((k) => [k, k === 'trace' && r.trace ? r.trace.map((t) => ({ ...t })) : r[k]]));
}

function parseOrNull(line: string): CaseResult | null {
  try {
    return JSON.parse(line) as CaseResult;
  } catch {
    return null;
  }
}

/** The generated scan and the interpreted one (where code generation is off), always run side by side. */
class Scanners {
  readonly generated = new CaseLineScanner();
  readonly interpreted = new CaseLineScanner({ interpreted: true });
}

/**
 * Asserts the scanners' verdict on `line`: both accept or both decline, and when they accept,
 * JSON.parse reads the line and gives the same figures (the same doubles: -0 as -0).
 */
function check(scanners: Scanners, line: string): boolean {
  const buf = Buffer.from(line + '\n');
  const ok = scanners.generated.scan(buf, 0, buf.length - 1);
  assert.equal(scanners.interpreted.scan(buf, 0, buf.length - 1), ok, `generated and interpreted scans disagree on: ${line}`);
  if (!ok) return false;
  const parsed = parseOrNull(line);
  assert.ok(parsed !== null, `scanner accepted a line JSON.parse refuses: ${line}`);
  // Both paths accept the same lines: what the scanner reads, the results parser's checks pass.
  assert.doesNotThrow(() => checkCaseLine(parsed as unknown as Record<string, unknown>, 'x', 1), `scanner accepted a line the parser refuses: ${line}`);
  // What the scanner does not read must not be on a line it accepts: the blocks the rebuild takes
  // from the parsed line (meta's load and judge), a conversation's turns.
  assert.equal(parsed.turns, undefined, `scanner accepted a line with turns: ${line}`);
  const meta = parsed.meta as Record<string, unknown> | undefined;
  if (meta !== undefined) {
    assert.ok(meta !== null && typeof meta === 'object' && !Array.isArray(meta), `scanner accepted a meta that is not an object: ${line}`);
    assert.ok(!Object.hasOwn(meta, 'load') && !Object.hasOwn(meta, 'judge'), `scanner accepted a line whose meta the rebuild reads: ${line}`);
  }
  for (const scanner of [scanners.generated, scanners.interpreted]) {
    assert.deepEqual(fieldsOf(scanner.r), fieldsOf(parsed), line);
    for (const k of ['pass', 'index', 'latency_ms', 'joules', 'weight', 'cost_usd', 'score', 'ttft_ms', 'retry_overhead_ms'] as const) assert.ok(Object.is(scanner.r[k], parsed[k]), `${k} in ${line}`);
  }
  return true;
}

describe('CaseLineScanner: the fast path reads what JSON.parse reads, or declines', () => {
  it('reads the encoder’s lines exactly (20,000 random cases), and declines what it does not read', () => {
    const scanner = new Scanners();
    let accepted = 0;
    let plain = 0;
    for (let i = 0; i < 20_000; i++) {
      const r = randomCase();
      const line = caseLine(r);
      const ok = check(scanner, line);
      if (ok) accepted++;
      // A meta the rebuild does not read (after a trace or not), and any by_domain, no longer send a line to JSON.parse.
      const readMeta = r.meta === undefined || (!('load' in r.meta) && !('judge' in r.meta) && !Object.keys(r.meta).some((k) => JSON.stringify(k).includes('\\')));
      const simple = r.error === null && readMeta && /^[\w:.-]*$/.test(r.dataset) && (r.stage === null || /^\w+$/.test(r.stage));
      if (simple) {
        plain++;
        assert.ok(ok, `declined a plain line: ${line}`);
      } else assert.ok(!ok || r.error === null, line);
    }
    assert.ok(plain > 10_000 && accepted >= plain, `${accepted} accepted of ${plain} plain`);
  });

  it('mutated lines: accepted only when JSON.parse reads the same figures (50,000 mutations)', () => {
    const scanner = new Scanners();
    const alphabet = ['"', '\\', ',', ':', '{', '}', '[', ']', ' ', '0', '1', '9', '-', '+', '.', 'e', 'E', 'n', 'u', 'l', 't', 'x', '\t', '\u0001', '\\u00e9', '\\x'];
    let acceptedMutants = 0;
    for (let i = 0; i < 50_000; i++) {
      let line = caseLine({ ...randomCase(), error: null, meta: undefined, joules_range: undefined } as CaseResult).replace(',"meta":null', '').replace(',"joules_range":null', '');
      for (let k = 1 + rng.below(3); k > 0; k--) {
        const at = rng.below(line.length + 1);
        const op = rng.below(3);
        if (op === 0) line = line.slice(0, at) + pick(alphabet) + line.slice(at);
        else if (op === 1) line = line.slice(0, at) + line.slice(at + 1 + rng.below(3));
        else line = line.slice(0, at) + pick(alphabet) + line.slice(at + 1);
      }
      if (check(scanner, line)) acceptedMutants++;
    }
    // Many mutations land in a number or a skipped string and stay valid: the comparison above ran on them.
    assert.ok(acceptedMutants > 1000, `${acceptedMutants}`);
  });

  it('a trace equal to the last one read is reused, never a stale or half-read one (30,000 lines)', () => {
    const scanner = new Scanners();
    const traces = [
      [{ stage: 'cache', hit: false, energy_uj: 1000 }, { stage: 'neural', hit: true, energy_uj: 50_000_000 }],
      [{ stage: 'cache', hit: false, energy_uj: 1000 }, { stage: 'neural', hit: true, energy_uj: 50_000_001 }],
      [{ stage: 'kv', hit: true, energy_uj: null }],
      [],
    ];
    // Strings the scanner reads plainly (a random dataset may hold an escape, which sends the line to JSON.parse).
    const lineWith = (trace: CaseResult['trace']) => caseLine({ ...randomCase(), dataset: 'router', stage: 'neural', error: null, meta: undefined, joules_range: undefined, trace } as CaseResult);
    // A trace read in full, then one that fails half-way (its first entry overwritten), then the first again.
    const first = lineWith(traces[0]);
    assert.ok(check(scanner, first));
    assert.ok(!check(scanner, first.replace('"stage":"neural","hit":true', '"stage":"neural","hit":tru')));
    assert.ok(check(scanner, lineWith(traces[0])));
    assert.ok(!check(scanner, lineWith(traces[0]) + 'x'), 'bytes after the reused trace');
    assert.ok(!check(scanner, lineWith(traces[0]).replace(/\]\}$/, ']]}')));
    let reused = 0;
    for (let i = 0; i < 30_000; i++) {
      let line = lineWith(pick(traces));
      if (chance(0.3)) {
        // A mutation inside the trace (or just before its end), where a stale reuse would show.
        const from = line.lastIndexOf('"trace":');
        const at = from + rng.below(line.length - from + 1);
        line = line.slice(0, at) + pick(['0', '1', ',', ']', '}', '"', 'x', '']) + line.slice(at + rng.below(2));
      }
      if (check(scanner, line) && line.includes('"trace":[{')) reused++;
    }
    assert.ok(reused > 10_000, `${reused}`);
  });

  it('numbers: every spelling JSON allows, read to the same double (-0 included)', () => {
    const scanner = new Scanners();
    const base = caseLine({ ...randomCase(), error: null, trace: undefined, meta: undefined, joules_range: undefined, dataset: 'd', stage: null } as CaseResult);
    const spellings = ['0', '-0', '0.0', '-0.0', '1e2', '1E2', '1e+2', '1e-2', '1.5e-300', '1e400', '-1e400', '123456789012345678901234567890', '0.30000000000000004', '9007199254740993', '1.7976931348623157e308', '4.9e-324', '0.000000000000000000000000001', '100000000000000000000000', '12.3400', '01', '1.', '.5', '+1', '1e', '--1', '0x10', '1_000', 'NaN', 'Infinity', 'nul', 'true'];
    for (let i = 0; i < 5000; i++) spellings.push(String(randomNumber()), randomNumber().toExponential(rng.below(18)), randomNumber().toFixed(rng.below(20)));
    let read = 0;
    for (const s of spellings) {
      const line = base.replace(/"latency_ms":[^,]*/, `"latency_ms":${s}`);
      if (check(scanner, line)) read++;
      else {
        // Declined: not a JSON number, or one too large for a double, which the results parser refuses too.
        const parsed = parseOrNull(line)?.latency_ms;
        assert.ok(typeof parsed !== 'number' || !Number.isFinite(parsed), `declined a valid number: ${s}`);
        if (typeof parsed === 'number') assert.throws(() => checkCaseLine(JSON.parse(line) as Record<string, unknown>, 'x', 1), /latency_ms is -?Infinity, not a number/);
      }
    }
    assert.ok(read > 10_000);
  });
});

describe('CaseLineScanner: hostile lines are read as JSON.parse reads them, or declined', () => {
  const trace = [{ stage: 'cache', hit: false, energy_uj: 1000 }, { stage: 'neural', hit: true, energy_uj: 50_000_000 }];
  // A fixed line (the rng above is left to the fuzz tests: describe bodies run before any test does).
  const base = caseLine({
    record: 'case', phase: 'scored', pass: 0, index: 7, case_id: 'rt-1', dataset: 'router', response: 'pong', stage: 'neural', expected: 'pong', passed: true, score: null, weight: 1,
    joules: 50.056, energy_source: 'model', below_floor: false, latency_ms: 12.5, ttft_ms: null, tpot_ms: null, prompt_tokens: 3, completion_tokens: 1, cost_usd: 0, attempts: 1, retry_overhead_ms: 0, error: null, trace,
  });
  const declined = (scanners: Scanners, line: string, why: string) => assert.equal(check(scanners, line), false, `${why}: ${line}`);

  it('a trace entry whose hit is null, and a by_domain that is not an object: declined (the results parser refuses both)', () => {
    const s = new Scanners();
    // check() asserts that a line the scanner reads passes checkCaseLine; these two did not, and were read.
    declined(s, base.replace('"hit":false', '"hit":null'), 'a trace entry with hit null');
    declined(s, base.replace('"hit":true', '"hit":null'), 'the last trace entry with hit null');
    for (const d of ['5', 'null', '"rapl"', '[]', '[{"joules":1}]', 'true']) {
      declined(s, base.replace('"error":null,"trace":', `"error":null,"by_domain":${d},"trace":`), `by_domain ${d}`);
      declined(s, base.replace(/,"trace":\[.*\]\}$/, `,"by_domain":${d}}`), `by_domain ${d} without a trace`);
    }
    assert.ok(check(s, base.replace('"error":null,"trace":', '"error":null,"by_domain":{},"trace":')), 'an empty by_domain object is still read');
  });

  it('a key repeated (JSON.parse keeps the last value), keys out of order, keys spelled with escapes: declined', () => {
    const s = new Scanners();
    assert.ok(check(s, base));
    declined(s, base.replace(/\}$/, ',"latency_ms":99}'), 'latency repeated at the end');
    declined(s, base.replace('"pass":', '"pass":7,"pass":'), 'pass repeated');
    declined(s, base.replace(/,"trace":(\[.*\])\}$/, ',"trace":$1,"trace":[]}'), 'trace repeated');
    declined(s, base.replace(/"score":([^,]*),"weight":([^,]*),/, '"weight":$2,"score":$1,'), 'score and weight swapped');
    declined(s, base.replace('"latency_ms":', '"l\\u0061tency_ms":'), 'a key with an escape');
    declined(s, base.replace('"joules":', '"joules" :'), 'whitespace in the line');
    declined(s, base.replace('{"record":', '{ "record":'), 'whitespace after the brace');
    declined(s, base + ' ', 'a space after the closing brace');
    declined(s, base + '\r', 'a carriage return after the closing brace');
    // Meta after the trace is checked and skipped: the same key names inside it change none of the line's figures (check compares them with JSON.parse).
    assert.ok(check(s, base.replace(/\}$/, ',"meta":{"latency_ms":1,"trace":[]}}')), 'meta with the same key names');
    declined(s, base.replace('"error":null', '"error":{"code":"E","message":"\\"latency_ms\\":1"}'), 'an error object');
    declined(s, base.replace(/"trace":\[.*\]\}$/, '"trace":null}'), 'a null trace');
  });

  it("a meter's by_domain and a target's meta: checked as JSON and skipped; meta the rebuild reads, bad JSON and deep nesting declined", () => {
    const s = new Scanners();
    const plain = base.replace(/,"trace":\[.*\]\}$/, '}');
    const withMeta = (meta: string) => plain.replace(/\}$/, `,"meta":${meta}}`);
    const withDomains = (d: string) => plain.replace('"error":null}', `"error":null,"by_domain":${d}}`);
    const accepted = (line: string, why: string) => assert.equal(check(s, line), true, `${why}: ${line}`);
    accepted(withMeta('{"e2e_ms":0.194,"streamed":false,"j_per_output_token":null,"output_tokens_per_j":null}'), "an HTTP target's facts");
    accepted(withMeta('{}'), 'an empty meta');
    accepted(withMeta('{"x":{"load":1,"judge":{"rating":3}}}'), 'load and judge nested below the top level');
    accepted(withMeta(`{"deep":${'['.repeat(20)}${']'.repeat(20)}}`), 'nesting 21 deep');
    accepted(withMeta('{"s":"a\\"b\\\\c\\u00e9\\n","n":-1.5e-300,"t":true,"f":false,"z":null,"a":[1,"x",{"k":[]}]}'), 'escapes and every kind of value');
    accepted(withDomains('{"package-0":{"joules":10.1,"source":"rapl"},"dram":{"joules":null,"source":"none"}}'), 'by_domain');
    accepted(base.replace('"error":null,"trace":', '"error":null,"by_domain":{"gpu0":{"joules":3,"source":"nvml"}},"trace":'), 'by_domain then a trace');
    accepted(withDomains('{"package-0":{"joules":1,"source":"rapl"}}').replace(/\}$/, ',"meta":{"e2e_ms":1}}'), 'by_domain then meta');
    accepted(base.replace(/\}$/, ',"meta":{"e2e_ms":1.5,"streamed":true}}'), "a trace, then meta (a cascade's neural answer)");
    accepted(base.replace('"error":null,"trace":', '"error":null,"by_domain":{"gpu0":{"joules":3,"source":"nvml"}},"trace":').replace(/\}$/, ',"meta":{}}'), 'by_domain, a trace, meta');
    declined(s, base.replace(/\}$/, ',"meta":{"judge":{"rating":1}}}'), 'a trace, then meta with a judge block');
    declined(s, base.replace(/\]\}$/, '],"meta":{}x}'), 'bytes after meta');
    declined(s, withMeta('{"load":{"request":1}}'), 'a load run\'s record');
    declined(s, withMeta('{"a":1,"judge":{"rating":3}}'), "a judge's verdict");
    declined(s, withMeta('{"lo\\u0061d":{"request":1}}'), 'load spelled with an escape');
    declined(s, withMeta('{"a\\n":1}'), 'any key with an escape');
    for (const meta of ['null', '"x"', '[1]', '3']) declined(s, withMeta(meta), `meta ${meta}`);
    for (const bad of ['{"a":01}', '{"a":tru}', '{"a":1,}', '{"a":[1,]}', '{"a" :1}', '{"a":1', '{"a":"\u0001"}', '{"a":"x\\q"}', '{a:1}', '{"a":1}}', '{"a":+1}', '{"a":.5}', '{"a":nul}', `{"deep":${'['.repeat(40)}${']'.repeat(40)}}`]) {
      declined(s, withMeta(bad), `meta ${bad}`);
      declined(s, withDomains(bad), `by_domain ${bad}`);
    }
    // joules_range is read (the aggregate sums it), in exactly the shape the runner writes.
    accepted(plain.replace(/\}$/, ',"joules_range":{"low":0.5,"high":-0}}'), 'joules_range');
    accepted(base.replace('"error":null,"trace":', '"error":null,"by_domain":{},"joules_range":{"low":1e-9,"high":2.5},"trace":').replace(/\}$/, ',"meta":{"e2e_ms":1}}'), 'every optional field a line can hold');
    for (const bad of ['{"low":null,"high":2}', '{"low":1,"high":null}', '{"high":2,"low":1}', '{"low":1,"high":2,"x":3}', '{"low":1}', '{"low":"1","high":2}', '{}', 'null', '[1,2]']) {
      declined(s, plain.replace(/\}$/, `,"joules_range":${bad}}`), `joules_range ${bad}`);
    }
    declined(s, withMeta('{}').replace(/\}$/, ',"joules_range":{"low":1,"high":2}}'), 'joules_range after meta');
    declined(s, plain.replace(/\}$/, ',"meta":{},"turns":[]}'), 'turns');
    declined(s, withMeta('{}').replace(/\}$/, ',"meta":{}}'), 'meta repeated');
    declined(s, withMeta('{}').replace('"error":null,', '"error":null,"meta":{},'), 'meta before by_domain would be');
  });

  it('lines with by_domain and meta, mutated: accepted only when JSON.parse reads the same figures (30,000 mutations)', () => {
    const s = new Scanners();
    const alphabet = ['"', '\\', ',', ':', '{', '}', '[', ']', ' ', '0', '1', '-', '.', 'e', 'n', 'u', 'l', 't', 'x', '\u0001', 'load', 'judge'];
    let acceptedMutants = 0;
    for (let i = 0; i < 30_000; i++) {
      const meta = JSON.stringify(i % 3 === 0 ? { e2e_ms: i / 7, streamed: i % 2 === 0 } : { n: [i, { x: 'y' }], s: 'a"b' });
      let line = base.replace(/,"trace":\[.*\]\}$/, `,"by_domain":{"package-0":{"joules":${i},"source":"rapl"}},"meta":${meta}}`);
      const from = line.indexOf('"error":null') + 12;
      for (let k = 1 + (i % 3); k > 0; k--) {
        const at = from + ((i * 7919 + k * 104729) % (line.length - from + 1));
        const op = (i + k) % 3;
        const ch = alphabet[(i * 31 + k) % alphabet.length]!;
        if (op === 0) line = line.slice(0, at) + ch + line.slice(at);
        else if (op === 1) line = line.slice(0, at) + line.slice(at + 1 + (k % 3));
        else line = line.slice(0, at) + ch + line.slice(at + 1);
      }
      if (check(s, line)) acceptedMutants++;
    }
    assert.ok(acceptedMutants > 1000, `${acceptedMutants}`);
  });

  it('the same key names inside the trace or inside strings change nothing, or the line is declined', () => {
    const s = new Scanners();
    const injected = '\\",\\"latency_ms\\":1e400,\\"passed\\":false,\\"trace\\":[],\\"x\\":\\"';
    assert.ok(check(s, base.replace(/"response":("[^"]*"|null)/, `"response":"${injected}"`)), 'an injection in a skipped string is read as text');
    assert.ok(check(s, base.replace(/"case_id":"[^"]*"/, `"case_id":"${injected}"`)));
    assert.ok(check(s, base.replace(/"expected":("[^"]*"|null)/, '"expected":"},{\\"stage\\":\\"cache\\"}]}"')));
    declined(s, base.replace('"energy_uj":1000}', '"energy_uj":1000,"latency_ms":5}'), 'an extra key in a trace entry');
    declined(s, base.replace('{"stage":"cache","hit":false,', '{"hit":false,"stage":"cache",'), 'trace entry keys out of order');
    declined(s, base.replace('{"stage":"cache"', '{"stage":{"stage":"cache"}'), 'a nested object for a trace stage');
    declined(s, base.replace('{"stage":"cache"', '{"stage":"cache","stage":"kv"'), 'a repeated key in a trace entry');
    declined(s, base.replace('"stage":"cache"', '"stage":"c\\u0061che"'), 'an escape in a trace stage the report reads');
    declined(s, base.replace('"dataset":"router"', '"dataset":"rout\\u0065r"'), 'an escape in the dataset the report reads');
    declined(s, base.replace('"dataset":"router"', '"dataset":"rou\u0001ter"'), 'a raw control character (JSON.parse refuses it)');
    declined(s, base.replace(/"response":("[^"]*"|null)/, '"response":"a\\xb"'), 'an escape JSON does not have');
    declined(s, base.replace(/"response":("[^"]*"|null)/, '"response":"tab\there"'), 'a raw tab in a string');
    assert.ok(check(s, base.replace(/"response":("[^"]*"|null)/, '"response":"\\ud800 lone surrogate, \\u00e9, ✓ 𝄞"')));
    assert.ok(check(s, base.replace(/"response":("[^"]*"|null)/, `"response":"${'x'.repeat(20_000)}"`)), 'a long response');
    assert.ok(check(s, base.replace('"dataset":"router"', '"dataset":"dätaset ✓"')), 'a dataset in UTF-8');
  });

  it('numbers: 1e400, -0, exponents and long digit runs read to the same double; non-JSON spellings declined', () => {
    const s = new Scanners();
    for (const [field, values] of [
      ['latency_ms', ['-0', '-0.0', '0e0', '1E+2', '-0.0e-0', '1e-400', '123456789012345678901234567890.5', '0.1e1']],
      ['joules', ['-0', '5e-324', '1.7976931348623157e308', '2.2250738585072011e-308', 'null']],
      ['weight', ['-0', '0.5', '1e22', '1e23']],
      ['score', ['-0', '1e-7', '0.30000000000000004']],
      ['index', ['0', '1e3', '1.0', '9007199254740993']],
    ] as const) {
      for (const value of values) {
        const line = base.replace(new RegExp(`"${field}":[^,]*`), `"${field}":${value}`);
        check(s, line); // parity asserted when read
        if (field !== 'index' || Number.isInteger(JSON.parse(value))) assert.ok(check(s, line), `declined ${field} ${value}`);
      }
      for (const bad of ['01', '1.', '.5', '+1', '1e', '0x10', 'NaN', 'Infinity', '-', '1_0', '"1"', 'true']) {
        declined(s, base.replace(new RegExp(`"${field}":[^,]*`), `"${field}":${bad}`), `${field} ${bad}`);
      }
    }
    // Too large for a double (JSON.parse's Infinity), or null where a case line never has one: declined,
    // and the results parser refuses the line, so neither path turns it into a figure.
    for (const [field, value, message] of [
      ['latency_ms', '1e400', /latency_ms is Infinity, not a number/],
      ['latency_ms', '-1e400', /latency_ms is -Infinity, not a number/],
      ['joules', '1e400', /joules is Infinity, not a number or null/],
      ['weight', 'null', /weight is null, not a number/],
      ['latency_ms', 'null', /latency_ms is null, not a number/],
      ['attempts', 'null', /attempts is null, not a number/],
      ['retry_overhead_ms', 'null', /retry_overhead_ms is null, not a number/],
      ['below_floor', 'null', /below_floor is null, not true or false/],
      ['energy_source', 'null', /energy_source is null, not a string/],
    ] as const) {
      const line = base.replace(new RegExp(`"${field}":[^,]*`), `"${field}":${value}`);
      declined(s, line, `${field} ${value}`);
      assert.throws(() => checkCaseLine(JSON.parse(line) as Record<string, unknown>, 'x', 1), message, `${field} ${value}`);
    }
    declined(s, base.replace(/"pass":[^,]*/, '"pass":0.5'), 'a fractional pass');
    declined(s, base.replace(/"index":[^,]*/, '"index":null'), 'a null index');
  });

  it('a trace is frozen and shared between lines with the same trace bytes; a changed byte is read again', () => {
    const s = new Scanners();
    for (const scanner of [s.generated, s.interpreted]) {
      const first = Buffer.from(base + '\n');
      assert.ok(scanner.scan(first, 0, first.length - 1));
      const t = scanner.r.trace!;
      assert.ok(Object.isFrozen(t) && t.every((x) => Object.isFrozen(x)));
      assert.ok(scanner.scan(first, 0, first.length - 1));
      assert.equal(scanner.r.trace, t, 'the same bytes: the same array');
      const changed = Buffer.from(base.replace('"energy_uj":1000}', '"energy_uj":1001}') + '\n');
      assert.ok(scanner.scan(changed, 0, changed.length - 1));
      assert.notEqual(scanner.r.trace, t);
      assert.equal(scanner.r.trace![0]!.energy_uj, 1001);
      assert.equal(t[0]!.energy_uj, 1000, 'the array handed out before is unchanged');
    }
    // More distinct traces than the cache holds, cycling: every line still reads its own trace.
    const lines = Array.from({ length: 20 }, (_, i) => base.replace('"energy_uj":1000}', `"energy_uj":${1000 + i}}`));
    for (let k = 0; k < 200; k++) assert.ok(check(s, lines[(k * 7) % lines.length]!));
  });
});

describe('CaseLineScanner.scanLine: finds where a line it reads ends, never past its newline', () => {
  it('lines back to back in one buffer (plain, mutated, with and without traces): the newline or -1, and the same figures', () => {
    const scanners = [new CaseLineScanner(), new CaseLineScanner({ interpreted: true })];
    const lines: string[] = [];
    for (let i = 0; i < 3000; i++) {
      let line = caseLine({ ...randomCase(), error: null, meta: undefined, joules_range: undefined } as CaseResult);
      if (chance(0.3)) {
        const at = rng.below(line.length + 1);
        line = line.slice(0, at) + pick(['}', '\n', ']}', '"', '', ',"x":1}']) + line.slice(at + rng.below(2));
      }
      lines.push(...line.split('\n'));
    }
    const text = lines.join('\n');
    const buf = Buffer.from(text);
    for (const scanner of scanners) {
      let read = 0;
      for (let s = 0, k = 0; s <= buf.length; k++) {
        let nl = buf.indexOf(0x0a, s);
        if (nl < 0) nl = buf.length;
        const got = scanner.scanLine(buf, s, buf.length);
        assert.equal(scanner.scan(buf, s, nl), got >= 0, lines[k]);
        if (got >= 0) {
          assert.equal(got, nl, `ends at its newline: ${lines[k]}`);
          const parsed = JSON.parse(lines[k]!) as CaseResult;
          assert.deepEqual(fieldsOf(scanner.r), fieldsOf(parsed));
          read++;
        }
        s = nl + 1;
      }
      assert.ok(read > 1500, `${read}`);
    }
  });
});

describe('CaseLineScanner: the caller reuses its buffer', () => {
  it('a trace cached from bytes since overwritten in the same buffer is compared with its own copy', () => {
    for (const interpreted of [false, true]) {
      const scanner = new CaseLineScanner({ interpreted });
      const buf = Buffer.alloc(1 << 12);
      // Traces of every length mod 8, two energies differing in the last digit (in the part compared byte by byte).
      for (let k = 1; k <= 16; k++) {
        for (const energy of [1001, 1002, 1001]) {
          const line = caseLine({ ...newCase(), trace: [{ stage: 'x'.repeat(k), hit: true, energy_uj: energy }] });
          const n = buf.write(line + '\n', 0);
          assert.ok(scanner.scan(buf, 0, n - 1), line);
          assert.equal(scanner.r.trace![0]!.energy_uj, energy, `stage of ${k}, ${interpreted ? 'interpreted' : 'generated'}`);
        }
      }
    }
  });
});

function newCase(): CaseResult {
  return {
    record: 'case', phase: 'scored', pass: 0, index: 1, case_id: 'c', dataset: 'd', response: null, stage: null, expected: null, passed: true, score: null, weight: 1,
    joules: 1, energy_source: 'model', below_floor: false, latency_ms: 2, ttft_ms: null, tpot_ms: null, prompt_tokens: null, completion_tokens: null, cost_usd: 0, attempts: 1, retry_overhead_ms: 0, error: null,
  };
}
