import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isJoulebenchError } from '../../src/core/errors.js';
import { runInfer, type InferOptions } from '../../src/infer/protocol.js';
import { DEFAULT_INFER_PROMPT, promptSha256 } from '../../src/infer/prompt.js';
import type { Meter } from '../../src/meters/meter.js';
import { FakeOllama } from '../helpers/fake-ollama.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-infer-'));
const snap = join(dir, 'snap.txt');

function options(url: string, over: Partial<InferOptions> = {}): InferOptions {
  return {
    baseUrl: url,
    models: ['m1'],
    threads: ['default'],
    runs: 3,
    warmup: 1,
    cold: 2,
    prompt: DEFAULT_INFER_PROMPT,
    prompt_source: 'built-in',
    num_predict: 4,
    seed: 42,
    temperature: 0,
    meter: null,
    gpu_snapshot_cmd: `cat '${snap}'`,
    // Cold: ~240 tokens in ~100 ms ≈ 2.4e3 tok/s × 2 × 1e6 params ≈ 5e9 FLOP/s; cached: 240 tokens in 0.2 ms ≈ 2.4e12.
    peak: { flops: 1e11, source: 'test' },
    cpu_default_peak: null,
    poll_interval_ms: 2,
    unload_timeout_ms: 2000,
    host: { cpu_model: 'test' },
    argv: [],
    ...over,
  };
}

/** Every string in the file that looks like a timestamp. */
function timestamps(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(v)) out.push(v);
  else if (Array.isArray(v)) v.forEach((x) => timestamps(x, out));
  else if (v && typeof v === 'object') Object.values(v).forEach((x) => timestamps(x, out));
  return out;
}

describe('joulebench infer protocol against a server that behaves like Ollama', () => {
  const decode: Record<string, number> = { default: 10, '4': 12, '8': 17.5 };
  const fake = new FakeOllama({
    models: { m1: { parameter_count: 1e6 } },
    // Big enough to stand clear of HTTP noise on a busy machine, small enough to keep the file fast.
    load_ms: 40,
    prefill_ms_per_token: 0.4,
    decode_tok_s: (t) => decode[String(t ?? 'default')]!,
    unload_lag_polls: 2,
    utc_offset: '+05:30',
  });
  let url = '';
  let file: Awaited<ReturnType<typeof runInfer>>;
  before(async () => {
    writeFileSync(snap, '0, NVIDIA H200, GPU-1, 38764 MiB\n');
    url = await fake.start();
    file = await runInfer(options(url, { threads: ['default', 8] }));
  });
  after(() => fake.stop());

  it('one arm per thread count, Ollama default first; each arm has cold_load, warmup_discarded, runs', () => {
    assert.deepEqual(
      file.arms.map((a) => [a.id, a.num_thread, a.cold_load.length, a.warmup_discarded.length, a.runs.length]),
      [
        ['m1@t=default', null, 2, 1, 3],
        ['m1@t=8', 8, 2, 1, 3],
      ],
    );
    const gens = fake.seen.filter((s) => s.path === '/api/generate' && s.body?.prompt !== undefined);
    assert.equal(gens.length, 2 * (2 + 1 + 3));
    assert.equal(gens.filter((g) => (g.body!.options as { num_thread?: number }).num_thread === 8).length, 6);
    assert.equal(gens.filter((g) => (g.body!.options as { num_thread?: number }).num_thread === undefined).length, 6);
  });

  it('every request sends the one frozen prompt, and its sha256 is in the file', () => {
    assert.equal(file.prompt_sha256, promptSha256(DEFAULT_INFER_PROMPT));
    const prompts = new Set(fake.seen.filter((s) => s.body?.prompt !== undefined).map((s) => s.body!.prompt));
    assert.deepEqual([...prompts], [DEFAULT_INFER_PROMPT]);
  });

  it('each cold run follows keep_alive 0 and a /api/ps poll that no longer lists the model', () => {
    const seen = fake.seen;
    let coldSeen = 0;
    for (const arm of file.arms) {
      for (const r of arm.cold_load) {
        // The fake lists an unloading model for 2 more polls; before the very first run nothing was loaded.
        assert.deepEqual(r.unload, { keep_alive_0: true, absent_from_ps: true, ps_polls: coldSeen === 0 ? 1 : 3 });
        assert.equal(r.prefill_kind, 'cold');
        assert.ok(r.load_duration_ns! >= 10e6, 'a cold run pays the load');
        coldSeen++;
      }
    }
    assert.equal(coldSeen, 4);
    // In the request log: unload, then ps polls, then the generation — for each of the 4 cold runs.
    const unloads = seen.map((s, i) => (s.body?.keep_alive === 0 ? i : -1)).filter((i) => i >= 0);
    assert.equal(unloads.length, 4);
    for (const u of unloads) {
      assert.equal(seen[u + 1]!.path, '/api/ps');
      const next = seen.slice(u + 1).find((s) => s.path !== '/api/ps')!;
      assert.equal(next.body!.prompt, DEFAULT_INFER_PROMPT);
    }
  });

  it('warm runs are cached-prefix (near-zero prompt_eval_duration); cold prefill is the real one', () => {
    for (const arm of file.arms) {
      for (const r of [...arm.warmup_discarded, ...arm.runs]) {
        assert.equal(r.prefill_kind, 'cached-prefix');
        assert.equal(r.prompt_eval_duration_ns, 200_000);
        assert.equal(r.load_duration_ns, 0);
      }
      for (const r of arm.cold_load) assert.ok(r.prompt_eval_duration_ns! > 5e6, 'r.prompt_eval_duration_ns! > 5e6');
      const s = file.summary.arms.find((x) => x.id === arm.id)!.stats!;
      const coldRates = arm.cold_load.map((r) => r.prefill_tok_s!).sort((a, b) => a - b);
      assert.equal(s.prefill_tok_s_cold.value, (coldRates[0]! + coldRates[1]!) / 2);
      assert.ok(s.prefill_tok_s_cold.value! < s.cached_prefix_rate_not_prefill.value! / 10, 's.prefill_tok_s_cold.value! < s.cached_prefix_rate_not_prefill.value! / 10');
      // The plausibility check passes the cold figure and flags the cached one.
      assert.equal(s.plausibility.cold_prefill.plausible, true);
      assert.equal(s.plausibility.cached_prefix.plausible, false);
      assert.equal(s.plausibility.cached_prefix.flag, 'cached-prefix artifact');
    }
  });

  it('per run: decode_tok_s, prefill_tok_s, ttft_ms, load_duration_ns; decode median and the four latency numbers', () => {
    const arm = file.arms[0]!;
    for (const r of arm.runs) {
      assert.equal(r.decode_tok_s, 10);
      assert.equal(typeof r.ttft_ms, 'number');
      assert.equal(typeof r.prefill_tok_s, 'number');
      assert.equal(typeof r.load_duration_ns, 'number');
    }
    const s = file.summary.arms[0]!.stats!;
    assert.equal(s.decode_tok_s_median.value, 10);
    const ft = s.first_token;
    // fully cold > fresh prompt (model loaded) > cached prefix, as on real hardware.
    assert.ok(ft.fully_cold_ms.value! > ft.fresh_prompt_model_loaded_ms.value!, 'ft.fully_cold_ms.value! > ft.fresh_prompt_model_loaded_ms.value!');
    assert.ok(ft.fresh_prompt_model_loaded_ms.value! > ft.cached_prefix_ms.value!, 'ft.fresh_prompt_model_loaded_ms.value! > ft.cached_prefix_ms.value!');
    assert.ok(s.first_token_ratios.cold_start_rule.value! > s.first_token_ratios.model_loaded_rule.value!, 's.first_token_ratios.cold_start_rule.value! > s.first_token_ratios.model_loaded_rule.value!');
  });

  it('thread sweep: best count beside the default, as a ratio', () => {
    const sw = file.summary.thread_sweeps[0]!;
    assert.equal(sw.best_arm, 'm1@t=8');
    assert.equal(sw.default_arm, 'm1@t=default');
    assert.equal(sw.best_over_default.value, 1.75);
  });

  it('receipts: size_vram 0 is a CPU-only receipt; GPU snapshots identical; host and Ollama version', () => {
    for (const arm of file.arms) {
      assert.equal(arm.receipts.size_vram, 0);
      assert.equal(arm.receipts.cpu_only_receipt, true);
      assert.equal(arm.receipts.gpu_snapshot, 'identical');
      assert.equal(arm.receipts.nvidia_before, '0, NVIDIA H200, GPU-1, 38764 MiB\n');
      assert.equal(arm.contaminated, false);
    }
    assert.equal(file.receipts.ollama_version, '0.12.3');
    assert.deepEqual(file.receipts.host, { cpu_model: 'test' });
  });

  it('UTC: expires_at converted to the same instant and counted; every timestamp Z-stamped', () => {
    const sent = fake.expiresSent.filter((e) => file.arms.some((a) => a.receipts.expires_at_utc === `${new Date(e.instant_ms).toISOString().slice(0, 23)}456789Z`));
    assert.ok(sent.length >= 2, 'each arm holds the converted form of an expires_at the server sent');
    for (const a of file.arms) assert.ok(!JSON.stringify(a).includes('+05:30'), '!JSON.stringify(a).includes(\'+05:30\')');
    assert.deepEqual(file.receipts.transforms, { counts: { 'local-offset-to-utc': 2 }, source_offsets: ['+05:30'] });
    const stamps = timestamps(file);
    assert.ok(stamps.length >= 20, `only ${stamps.length} timestamps`);
    for (const t of stamps) assert.match(t, /Z$/, t);
  });

  it('energy: null with no meter, never 0', () => {
    for (const r of file.arms.flatMap((a) => [...a.cold_load, ...a.runs])) {
      assert.equal(r.energy_j, null);
      assert.equal(r.j_per_decoded_token, null);
      assert.equal(r.decoded_tokens_per_j, null);
      assert.equal(r.energy_source, 'none');
    }
  });
});

after(() => rmSync(dir, { recursive: true, force: true }));

describe('contamination: a GPU snapshot that changes mid-arm', () => {
  it('marks that arm contaminated, keeps it named in the file, and excludes it from summaries', async () => {
    writeFileSync(snap, '0, 38764 MiB\n');
    // 6 generations per arm: flip the snapshot during the second arm's scored runs.
    const fake = new FakeOllama({
      models: { m1: { parameter_count: 1e6 } },
      load_ms: 1,
      prefill_ms_per_token: 0,
      decode_tok_s: (t) => (t === 4 ? 50 : 10),
      onGeneration: (n) => {
        if (n === 10) writeFileSync(snap, '0, 46719 MiB\n');
      },
    });
    const url = await fake.start();
    try {
      const file = await runInfer(options(url, { threads: ['default', 4] }));
      const [clean, dirty] = file.arms;
      assert.equal(clean!.contaminated, false);
      assert.equal(dirty!.contaminated, true);
      assert.equal(dirty!.receipts.gpu_snapshot, 'changed');
      assert.equal(dirty!.receipts.nvidia_before, '0, 38764 MiB\n');
      assert.equal(dirty!.receipts.nvidia_after, '0, 46719 MiB\n');
      assert.match(dirty!.contamination!, /38764 MiB.*46719 MiB/);
      assert.equal(dirty!.runs.length, 3, 'kept in the file');
      assert.deepEqual(file.summary.excluded_from_summaries.map((e) => e.id), ['m1@t=4']);
      assert.equal(file.summary.arms[1]!.stats, null);
      // The contaminated arm's 50 tok/s would win the sweep; excluded, it cannot.
      const sw = file.summary.thread_sweeps[0]!;
      assert.equal(sw.best_arm, 'm1@t=default');
      assert.deepEqual(sw.excluded.map((e) => e.id), ['m1@t=4']);
    } finally {
      await fake.stop();
    }
  });

  it('a snapshot command that fails is "unavailable", not a pass', async () => {
    const fake = new FakeOllama({ models: { m1: { parameter_count: 1e6 } }, load_ms: 1, prefill_ms_per_token: 0 });
    const url = await fake.start();
    try {
      const file = await runInfer(options(url, { cold: 0, warmup: 0, runs: 1, gpu_snapshot_cmd: 'exit 3' }));
      assert.equal(file.arms[0]!.receipts.gpu_snapshot, 'unavailable');
      assert.match(file.arms[0]!.receipts.gpu_snapshot_error!, /exit 3/);
      assert.equal(file.arms[0]!.contaminated, false);
    } finally {
      await fake.stop();
    }
  });
});

describe('energy from a meter, GPU-resident models, unload failures', () => {
  it('joules per decoded token and tokens per joule from the meter window of each run', async () => {
    const meter: Meter = {
      id: 'fake-rapl',
      source: 'rapl',
      floor_ms: 0,
      probe: async () => ({ available: true }),
      start: async () => ({ stop: async () => ({ joules: 2, source: 'rapl', by_domain: {}, window_ms: 1, below_floor: false }) }),
      describe: () => ({}),
    };
    const fake = new FakeOllama({ models: { m1: { parameter_count: 1e6 } }, load_ms: 1, prefill_ms_per_token: 0 });
    const url = await fake.start();
    try {
      const file = await runInfer(options(url, { cold: 1, warmup: 0, runs: 2, meter }));
      const r = file.arms[0]!.runs[0]!;
      assert.equal(r.energy_j, 2);
      assert.equal(r.energy_source, 'rapl');
      assert.equal(r.j_per_decoded_token, 0.5); // 2 J ÷ 4 decoded tokens
      assert.equal(r.decoded_tokens_per_j, 2);
      const e = file.summary.arms[0]!.stats!.energy;
      assert.equal(e.j_per_decoded_token_median, 0.5);
      assert.equal(e.source, 'rapl');
    } finally {
      await fake.stop();
    }
  });

  it('a model in VRAM has no CPU-only receipt, and the CPU peak is not applied to it', async () => {
    const fake = new FakeOllama({ models: { g: { parameter_count: 1e6, size_vram: 4_000_000_000 } }, load_ms: 1, prefill_ms_per_token: 0 });
    const url = await fake.start();
    try {
      const file = await runInfer(options(url, { models: ['g'], cold: 1, warmup: 0, runs: 1, peak: null, cpu_default_peak: { flops: 1, source: 'tiny' } }));
      const arm = file.arms[0]!;
      assert.equal(arm.receipts.cpu_only_receipt, false);
      const s = file.summary.arms[0]!.stats!;
      assert.equal(s.plausibility.peak_flops, null);
      assert.equal(s.plausibility.cold_prefill.plausible, null);
      assert.ok(s.flags.some((f) => /skipped.*VRAM/.test(f)), 's.flags.some((f) => /skipped.*VRAM/.test(f))');
    } finally {
      await fake.stop();
    }
  });

  it('a model that never leaves /api/ps stops the run: a cold run would not be cold', async () => {
    const fake = new FakeOllama({ models: { m1: { parameter_count: 1e6 } }, load_ms: 1, prefill_ms_per_token: 0, unload_lag_polls: 1e9 });
    const url = await fake.start();
    try {
      // Load it first so there is something to unload.
      await runInfer(options(url, { cold: 0, warmup: 0, runs: 1 }));
      await assert.rejects(runInfer(options(url, { cold: 1, unload_timeout_ms: 30 })), (e: unknown) => {
        assert.ok(isJoulebenchError(e), 'isJoulebenchError(e)');
        assert.equal(e.code, 'E_RUN');
        assert.match(e.message, /still listed in \/api\/ps.*would not be cold/);
        return true;
      });
    } finally {
      await fake.stop();
    }
  });
});
