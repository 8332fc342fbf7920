import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CaseLineScanner, SCANNED_FIELDS } from '../../src/report/case-scan.js';
import { caseLine } from '../../src/runner/case-line.js';
import type { CaseResult } from '../../src/core/types.js';
import { seededRng } from '../../src/stats/rng.js';

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
  if (chance(0.03)) r.joules_range = { low: 1, high: 2 };
  return r;
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

/** Asserts the scanner's verdict on `line`: when it accepts, JSON.parse gives the same figures. */
function check(scanner: CaseLineScanner, line: string): boolean {
  const buf = Buffer.from(line + '\n');
  const ok = scanner.scan(buf, 0, buf.length - 1);
  if (!ok) return false;
  const parsed = parseOrNull(line);
  assert.ok(parsed !== null, `scanner accepted a line JSON.parse refuses: ${line}`);
  assert.deepEqual(fieldsOf(scanner.r), fieldsOf(parsed), line);
  for (const k of ['pass', 'latency_ms', 'joules', 'weight', 'cost_usd'] as const) assert.ok(Object.is(scanner.r[k], parsed[k]), `${k} in ${line}`);
  return true;
}

describe('CaseLineScanner: the fast path reads what JSON.parse reads, or declines', () => {
  it('reads the encoder’s lines exactly (20,000 random cases), and declines what it does not read', () => {
    const scanner = new CaseLineScanner();
    let accepted = 0;
    let plain = 0;
    for (let i = 0; i < 20_000; i++) {
      const r = randomCase();
      const line = caseLine(r);
      const ok = check(scanner, line);
      if (ok) accepted++;
      const simple = r.error === null && r.meta === undefined && r.joules_range === undefined && /^[\w:.-]*$/.test(r.dataset) && (r.stage === null || /^\w+$/.test(r.stage));
      if (simple) {
        plain++;
        assert.ok(ok, `declined a plain line: ${line}`);
      } else assert.ok(!ok || r.error === null, line);
    }
    assert.ok(plain > 10_000 && accepted >= plain, `${accepted} accepted of ${plain} plain`);
  });

  it('mutated lines: accepted only when JSON.parse reads the same figures (50,000 mutations)', () => {
    const scanner = new CaseLineScanner();
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
    const scanner = new CaseLineScanner();
    const traces = [
      [{ stage: 'cache', hit: false, energy_uj: 1000 }, { stage: 'neural', hit: true, energy_uj: 50_000_000 }],
      [{ stage: 'cache', hit: false, energy_uj: 1000 }, { stage: 'neural', hit: true, energy_uj: 50_000_001 }],
      [{ stage: 'kv', hit: true, energy_uj: null }],
      [],
    ];
    const lineWith = (trace: CaseResult['trace']) => caseLine({ ...randomCase(), error: null, meta: undefined, joules_range: undefined, trace } as CaseResult);
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
    const scanner = new CaseLineScanner();
    const base = caseLine({ ...randomCase(), error: null, trace: undefined, meta: undefined, joules_range: undefined, dataset: 'd', stage: null } as CaseResult);
    const spellings = ['0', '-0', '0.0', '-0.0', '1e2', '1E2', '1e+2', '1e-2', '1.5e-300', '1e400', '-1e400', '123456789012345678901234567890', '0.30000000000000004', '9007199254740993', '1.7976931348623157e308', '4.9e-324', '0.000000000000000000000000001', '100000000000000000000000', '12.3400', '01', '1.', '.5', '+1', '1e', '--1', '0x10', '1_000', 'NaN', 'Infinity', 'nul', 'true'];
    for (let i = 0; i < 5000; i++) spellings.push(String(randomNumber()), randomNumber().toExponential(rng.below(18)), randomNumber().toFixed(rng.below(20)));
    let read = 0;
    for (const s of spellings) {
      const line = base.replace(/"latency_ms":[^,]*/, `"latency_ms":${s}`);
      if (check(scanner, line)) read++;
      else assert.notEqual(typeof parseOrNull(line)?.latency_ms, 'number', `declined a valid number: ${s}`);
    }
    assert.ok(read > 10_000);
  });
});
