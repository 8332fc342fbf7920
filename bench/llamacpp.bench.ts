/**
 * Two questions about the `llamacpp` target, answered in one run on the same tiny generated GGUF (random
 * weights, so every generation runs to max_tokens), the same prompts and the same token budget, greedy
 * and seeded:
 *
 * 1. Is joulebench's default thread count (the physical cores this process may use, capped at those
 *    idle when the model loads) close to the best count on this machine? Each count from 1 to os.availableParallelism() is one arm: the target with
 *    `threads: N`; the default arm is the target with no count. Rounds alternate the arm order; the
 *    median tokens/s (generated tokens ÷ wall time) per arm is printed, and best ÷ default.
 * 2. Does joulebench cost throughput against node-llama-cpp called directly, at the default count?
 *    - direct: `getLlama` (the same instance) → `loadModel` → `createContext` (the same threads) → one
 *      `LlamaChatSession` with the GGUF's Jinja template → `session.prompt(p, { maxTokens, temperature: 0, seed })`,
 *      the history cleared before each prompt — what a user of the library writes;
 *    - joulebench: the `llamacpp` target's `answer()` (`createLlamaCppTarget`): the same calls plus the
 *      prompt-fits-the-context check, per-token timestamps, reading and resetting llama.cpp's perf counters
 *      and building the case's `meta.llamacpp`.
 *    Trials alternate (direct first in even rounds, joulebench first in odd ones) so drift on a shared
 *    machine hits both alike. Per round: wall and CPU time (user + system of this process, llama.cpp's
 *    threads included) per generated token; medians side by side, and tokens/s joulebench ÷ direct.
 *    The tiny model decodes in well under a millisecond per token, so a fixed per-generation cost weighs
 *    far more here than on a real model: the overhead is an upper bound.
 * Run: npm run bench:llamacpp [-- --threads N] (part 2 at N threads instead of the default; the last --threads wins)
 *      (BENCH_ROUNDS default 7, BENCH_TOKENS default 32)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { median } from '../src/core/stats.js';
import type { Case } from '../src/core/types.js';
import { getLlamaInstance } from '../src/targets/llamacpp/binding.js';
import { createLlamaCppTarget } from '../src/targets/llamacpp/target.js';
import { writeTinyGguf } from '../test/helpers/tiny-gguf.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const TOKENS = Number(process.env.BENCH_TOKENS ?? 32);
const threadsAt = process.argv.lastIndexOf('--threads');
const ASKED = threadsAt >= 0 ? Number(process.argv[threadsAt + 1]) : null;

const PROMPTS = [
  'What is the capital of France? Answer in one word.',
  'Name three prime numbers.',
  'Translate "good morning" into German.',
  'Write one sentence about energy per token.',
  'Which is larger, 7 or 12?',
  'Give a synonym for "fast".',
  'What colour is the sky on a clear day?',
  'Summarise: the meter reads the counters before and after each case.',
];

interface Arm {
  name: string;
  /** Runs every prompt once; returns the tokens generated. */
  round(): Promise<number>;
}

interface Sample {
  wall_us_per_token: number;
  cpu_us_per_token: number;
  tokens: number;
}

async function measure(arm: Arm): Promise<Sample> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const tokens = await arm.round();
  const wall_ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wall_us_per_token: (wall_ms * 1000) / tokens, cpu_us_per_token: (c.user + c.system) / tokens, tokens };
}

async function main(): Promise<void> {
  if (ASKED !== null && (!Number.isInteger(ASKED) || ASKED < 1)) throw new Error('--threads must be an integer >= 1');
  const dir = mkdtempSync(join(tmpdir(), 'jb-bench-llama-'));
  const model = join(dir, 'tiny.gguf');
  writeTinyGguf(model);
  try {
    // --- 1. default thread count against every count this machine allows ---
    await threadSweep(model);

    // --- 2. joulebench: the llamacpp target ---
    const target = await createLlamaCppTarget({ model_path: model, ...(ASKED !== null ? { threads: ASKED } : {}), max_tokens: TOKENS, temperature: 0, seed: 42 });
    // The count the target resolved (the default is capped at the CPUs idle when it loaded): direct gets the same.
    const THREADS = Number(target.describe().threads);
    const jb: Arm = { name: 'joulebench llamacpp target', round: () => targetRound(target) };

    // --- direct: node-llama-cpp as its own documentation shows it ---
    // The same Llama instance: llama.cpp's log callback is process-wide, so a second getLlama() would
    // take it over (and joulebench could no longer read its perf counters).
    const lib = await import('node-llama-cpp');
    const llama = await getLlamaInstance(false);
    const m = await llama.loadModel({ modelPath: model });
    const ctx = await m.createContext({ contextSize: Math.min(m.trainContextSize, 4096), threads: { ideal: THREADS, min: THREADS } });
    const seq = ctx.getSequence();
    const session = new lib.LlamaChatSession({ contextSequence: seq, chatWrapper: lib.resolveChatWrapper(m, { type: 'jinjaTemplate' }) });
    const direct: Arm = {
      name: 'node-llama-cpp directly',
      async round() {
        const before = seq.tokenMeter.getState();
        for (const p of PROMPTS) {
          session.setChatHistory([]);
          await session.prompt(p, { maxTokens: TOKENS, temperature: 0, seed: 42 });
        }
        return seq.tokenMeter.diff(before).usedOutputTokens;
      },
    };

    // One untimed round each: first-call costs (template compilation, allocator warm-up) stay out.
    await direct.round();
    await jb.round();
    const samples = new Map<string, Sample[]>([
      [direct.name, []],
      [jb.name, []],
    ]);
    for (let r = 0; r < ROUNDS; r++) {
      for (const arm of r % 2 === 0 ? [direct, jb] : [jb, direct]) samples.get(arm.name)!.push(await measure(arm));
    }
    await target.close?.();
    await ctx.dispose();
    await m.dispose();

    const d = samples.get(direct.name)!;
    const j = samples.get(jb.name)!;
    const tok = (s: Sample[]) => [...new Set(s.map((x) => x.tokens))].join('/');
    if (tok(d) !== tok(j)) console.log(`WARNING: the arms generated different token counts (direct ${tok(d)}, joulebench ${tok(j)})`);
    const med = (s: Sample[], k: keyof Sample) => median(s.map((x) => x[k]))!;
    const pairedRatio = (k: 'wall_us_per_token' | 'cpu_us_per_token') => median(d.map((x, i) => j[i]![k] / x[k]))!;
    console.log(
      `2. joulebench against node-llama-cpp directly: ${PROMPTS.length} prompts x ${TOKENS} tokens per round, ${ROUNDS} rounds alternated, ${THREADS} threads (${threadsAt >= 0 ? '--threads' : 'the default'}) both, node ${process.version}`,
    );
    console.log(`tokens per round: direct ${tok(d)}, joulebench ${tok(j)}`);
    const row = (name: string, a: string, b: string, c: string) => console.log(`${name.padEnd(30)}${a.padStart(16)}${b.padStart(16)}${c.padStart(10)}`);
    row('per generated token (median)', 'direct', 'joulebench', 'ratio');
    for (const [label, k] of [
      ['wall µs', 'wall_us_per_token'],
      ['CPU µs', 'cpu_us_per_token'],
    ] as const) {
      const a = med(d, k);
      const b = med(j, k);
      row(label, a.toFixed(1), b.toFixed(1), `${(b / a).toFixed(2)}x`);
    }
    console.log(
      `paired per-round ratio (median): wall ${pairedRatio('wall_us_per_token').toFixed(2)}x, CPU ${pairedRatio('cpu_us_per_token').toFixed(2)}x; ` +
        `joulebench's extra per token: wall ${(med(j, 'wall_us_per_token') - med(d, 'wall_us_per_token')).toFixed(1)} µs, CPU ${(med(j, 'cpu_us_per_token') - med(d, 'cpu_us_per_token')).toFixed(1)} µs`,
    );
    const tokS = (s: Sample[]) => 1e6 / med(s, 'wall_us_per_token');
    console.log(
      `tokens/s: direct ${tokS(d).toFixed(0)}, joulebench ${tokS(j).toFixed(0)}; joulebench ÷ direct = ${(tokS(j) / tokS(d)).toFixed(2)}x (paired ${(1 / pairedRatio('wall_us_per_token')).toFixed(2)}x; goal >= 0.9)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function targetRound(target: Awaited<ReturnType<typeof createLlamaCppTarget>>): Promise<number> {
  let tokens = 0;
  for (const [i, p] of PROMPTS.entries()) {
    const c: Case = { id: `p${i}`, prompt: p, expected: null, dataset: 'bench', weight: 1, tags: [] };
    const a = await target.answer({ prompt: p, case: c });
    tokens += a.usage?.completion_tokens ?? 0;
  }
  return tokens;
}

/** Part 1: tokens/s of the target at its default thread count and at each count 1…availableParallelism(). */
async function threadSweep(model: string): Promise<void> {
  const counts = Array.from({ length: availableParallelism() }, (_, i) => i + 1);
  const arms: { label: string; threads: number; target: Awaited<ReturnType<typeof createLlamaCppTarget>>; tok_s: number[] }[] = [];
  const def = await createLlamaCppTarget({ model_path: model, max_tokens: TOKENS, temperature: 0, seed: 42 });
  arms.push({ label: 'default', threads: Number(def.describe().threads), target: def, tok_s: [] });
  for (const t of counts) arms.push({ label: `t=${t}`, threads: t, target: await createLlamaCppTarget({ model_path: model, threads: t, max_tokens: TOKENS, temperature: 0, seed: 42 }), tok_s: [] });
  for (const a of arms) await targetRound(a.target); // untimed first round each
  for (let r = 0; r < ROUNDS; r++) {
    for (const a of r % 2 === 0 ? arms : [...arms].reverse()) {
      const t0 = performance.now();
      const tokens = await targetRound(a.target);
      a.tok_s.push(tokens / ((performance.now() - t0) / 1000));
    }
  }
  for (const a of arms) await a.target.close?.();
  console.log(`1. thread count: tiny GGUF (2 layers, 64 wide), ${PROMPTS.length} prompts x ${TOKENS} tokens per round, ${ROUNDS} rounds alternated, os.availableParallelism() ${availableParallelism()}`);
  console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; default: ${def.describe().threads} threads, ${def.describe().threads_source}`);
  const best = arms.filter((a) => a.label !== 'default').reduce((b, a) => (median(a.tok_s)! > median(b.tok_s)! ? a : b));
  const defArm = arms[0]!;
  for (const a of arms) console.log(`${a.label.padEnd(10)}${`${a.threads} threads`.padStart(12)}${`${median(a.tok_s)!.toFixed(0)} tok/s`.padStart(16)}${`${(median(a.tok_s)! / median(best.tok_s)!).toFixed(2)}x of best`.padStart(16)}`);
  console.log(`best ${best.label} ÷ default (${defArm.threads} threads) = ${(median(best.tok_s)! / median(defArm.tok_s)!).toFixed(2)}x (goal <= 1.5)\n`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
