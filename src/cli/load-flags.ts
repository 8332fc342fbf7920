import { InvalidArgumentError, Option, type Command } from 'commander';
import { resolve } from 'node:path';
import { JoulebenchError } from '../core/errors.js';
import type { Slo } from '../load/metrics.js';
import { DEFAULT_PERCENTILES, type LoadOptions, type TtftToken } from '../load/options.js';
import type { LoadDataset } from '../load/dataset.js';
import { intAtLeast } from './options.js';
import { MAX_TIMER_MS, MAX_TOKENS } from '../core/bounds.js';

/** The longest prompt or prefix `--dataset random` generates, tokens. */
const MAX_DATASET_LEN = 1_000_000;

/** `run`'s open-loop load flags, as commander gives them. */
export interface LoadFlags {
  requestRate?: number[];
  burstiness: number;
  seed: number;
  maxConcurrency?: number;
  numRequests?: number;
  percentiles: number[];
  slo?: Slo;
  ttftToken: TtftToken;
  cooldownS: number;
  /** `--runs N`: the load run repeated N times (absent: once). */
  runs?: number;
  /** `--find-max-rate`: search for the highest rate whose goodput share meets `goodputTarget`. */
  findMaxRate?: boolean;
  goodputTarget: number;
  maxRequestRate?: number;
  /** `--dataset random` with its lengths: a synthetic workload instead of the suite. */
  dataset?: 'random' | 'sharegpt';
  /** `--data FILE`: the ShareGPT file with `--dataset sharegpt`. */
  data?: string;
  inputLen?: number;
  outputLen?: number;
  rangeRatio?: number;
  prefixLen?: number;
  /** `--tokenizer FILE`: a GGUF file whose vocabulary sizes the dataset's prompts. */
  tokenizer?: string;
  /** `--think-time-ms`: multi-turn cases are conversations, each later turn sent this long after the previous answer. */
  thinkTimeMs?: number;
}

/** The most repeats `--runs` takes. */
const MAX_LOAD_RUNS = 100;

export function addLoadFlags(cmd: Command): Command {
  return cmd
    .option('--request-rate <r[,r…]>', 'open-loop load: requests/s on a Poisson schedule ("inf": all at once); several rates run one after another', parseRates)
    .option('--burstiness <b>', 'gamma shape of the arrival gaps (1 = Poisson, < 1 burstier; vLLM\'s definition)', positiveNumber('burstiness'), 1)
    .option('--seed <n>', 'seeds the arrival schedule (the same seed gives the same schedule)', intAtLeast(0), 0)
    .option('--max-concurrency <n>', 'load runs: requests in flight at most (default: unbounded)', intAtLeast(1))
    .option('--num-requests <n>', 'load runs: requests to send, cycling the suite\'s cases (default: one per case)', intAtLeast(1))
    .option('--percentiles <list>', 'load runs: percentiles of TTFT/TPOT/ITL/E2EL, like vLLM\'s --metric-percentiles', parsePercentiles, DEFAULT_PERCENTILES)
    .option('--slo <k=v,…>', 'load runs: service-level objectives in ms (ttft_ms, tpot_ms, e2el_ms) for goodput', parseSlo)
    .option('--ttft-token <content|any>', 'load runs: TTFT waits for the first visible content token, or any output token (reasoning included)', parseTtftToken, 'content')
    .option('--runs <n>', `load runs: repeat the run N times (one results file each) and give each serving figure a Student-t 95 % interval and CV over the runs, at most ${MAX_LOAD_RUNS}`, intAtLeast(1, MAX_LOAD_RUNS))
    .option('--find-max-rate', 'load runs: search (doubling, then bisection) for the highest request rate whose goodput share meets --goodput-target under --slo; --request-rate is the first rate (default 1)')
    .option('--goodput-target <f>', 'with --find-max-rate: the share of requests that must meet every SLO', boundedNumber('goodput-target', Number.MIN_VALUE, 1), 0.9)
    .option('--max-request-rate <r>', 'with --find-max-rate: the highest rate tried, requests/s', positiveNumber('max-request-rate'))
    .addOption(new Option('--dataset <kind>', 'load runs: a workload instead of the suite, one prompt per request (--num-requests): random (--input-len word prompts asking --output-len tokens with ignore_eos) or sharegpt (--data FILE: first turns, asking the reply\'s length; with --think-time-ms, whole conversations)').choices(['random', 'sharegpt']))
    .option('--input-len <n>', 'with --dataset random: prompt length, tokens (one word ≈ one token)', intAtLeast(1, MAX_DATASET_LEN))
    .option('--output-len <n>', 'with --dataset random: output tokens asked (max_tokens, with ignore_eos)', intAtLeast(1, MAX_TOKENS))
    .option('--range-ratio <r>', 'with --dataset random: prompt lengths uniform in input-len × [1 − r, 1 + r] (vLLM\'s --random-range-ratio), r in [0, 1)', boundedNumber('range-ratio', 0, 0.999), 0)
    .option('--prefix-len <n>', 'with --dataset random: a prefix of this many tokens shared by every prompt', intAtLeast(0, MAX_DATASET_LEN), 0)
    .option('--tokenizer <file.gguf>', 'with --dataset: count prompt and reply tokens with this GGUF model\'s tokenizer (its vocabulary only is loaded) instead of words')
    .option('--think-time-ms <ms>', 'load runs: multi-turn cases (MT-Bench, --dataset sharegpt) are conversations: each later turn is sent this long after the previous answer, after the model\'s own answers; --num-requests counts conversations', boundedNumber('think-time-ms', 0, MAX_TIMER_MS))
    .option('--cooldown-s <s>', 'rate sweeps, --find-max-rate and --runs: pause between runs, s', boundedNumber('cooldown-s', 0, MAX_TIMER_MS / 1000), 5);
}

/** The load options the flags ask for, or null without `--request-rate` (one rate; see {@link ratesOf}). */
export function loadOptionsFrom(flags: LoadFlags, rate: number): Omit<LoadOptions, 'num_requests'> & { num_requests?: number } {
  if (flags.thinkTimeMs !== undefined && flags.dataset === 'random') throw new JoulebenchError('E_USAGE', '--think-time-ms needs multi-turn cases (--dataset sharegpt, or a suite such as mt-bench); --dataset random prompts are single-turn, with no replies to size later turns by');
  return {
    request_rate: rate,
    burstiness: flags.burstiness,
    seed: flags.seed,
    max_concurrency: flags.maxConcurrency ?? null,
    ...(flags.numRequests !== undefined ? { num_requests: flags.numRequests } : {}),
    percentiles: flags.percentiles,
    slo: flags.slo ?? null,
    ttft_token: flags.ttftToken,
    ...(flags.dataset ? { dataset: datasetFrom(flags) } : {}),
    ...(flags.thinkTimeMs !== undefined ? { think_time_ms: flags.thinkTimeMs } : {}),
  };
}

function datasetFrom(flags: LoadFlags): LoadDataset {
  if (flags.dataset === 'sharegpt') {
    if (flags.data === undefined) throw new JoulebenchError('E_USAGE', '--dataset sharegpt needs --data FILE (a ShareGPT JSON list of conversations)');
    return { kind: 'sharegpt', path: resolve(flags.data), ...lengthsBy(flags) };
  }
  if (flags.inputLen === undefined || flags.outputLen === undefined) throw new JoulebenchError('E_USAGE', '--dataset random needs --input-len and --output-len');
  return { kind: 'random', input_len: flags.inputLen, output_len: flags.outputLen, range_ratio: flags.rangeRatio ?? 0, prefix_len: flags.prefixLen ?? 0, ...lengthsBy(flags) };
}

function lengthsBy(flags: LoadFlags): Pick<LoadDataset, 'prompt_lengths' | 'tokenizer'> {
  return flags.tokenizer === undefined ? { prompt_lengths: 'approx-words' } : { prompt_lengths: 'tokenizer', tokenizer: resolve(flags.tokenizer) };
}

/** True when a load-only flag was given without `--request-rate` (they would be silently ignored). */
export function strayLoadFlag(flags: Partial<LoadFlags>): string | null {
  if (flags.requestRate || flags.findMaxRate) return null;
  if (flags.dataset !== undefined) return '--dataset';
  if (flags.maxConcurrency !== undefined) return '--max-concurrency';
  if (flags.numRequests !== undefined) return '--num-requests';
  if (flags.slo !== undefined) return '--slo';
  if (flags.runs !== undefined) return '--runs';
  if (flags.thinkTimeMs !== undefined) return '--think-time-ms';
  return null;
}

/** A `--dataset random` length flag given without it, or `--tokenizer` without `--dataset` (each would be silently ignored). */
export function strayDatasetFlag(flags: Partial<LoadFlags>): string | null {
  if (flags.dataset === undefined && flags.tokenizer !== undefined) return '--tokenizer';
  if (flags.dataset === 'random') return null;
  for (const [flag, v] of [['--input-len', flags.inputLen], ['--output-len', flags.outputLen], ['--range-ratio', flags.rangeRatio || undefined], ['--prefix-len', flags.prefixLen || undefined]] as const) {
    if (v !== undefined) return flag;
  }
  return null;
}

function parseRates(value: string): number[] {
  const rates = value.split(',').map((s) => s.trim());
  if (rates.length === 0 || rates.some((s) => s === '')) throw new InvalidArgumentError(`must be a rate or a comma-separated list of rates, got "${value}"`);
  return rates.map((s) => {
    if (/^inf(inity)?$/i.test(s)) return Infinity;
    const n = Number(s);
    if (!/^\d+(\.\d+)?(e[+-]?\d+)?$/i.test(s) || !Number.isFinite(n) || n <= 0 || n > 1e6) {
      throw new InvalidArgumentError(`each rate must be a number of requests/s in (0, 1e6] or "inf", got "${s}"`);
    }
    return n;
  });
}

function parsePercentiles(value: string): number[] {
  const out = value.split(',').map((s) => {
    const n = Number(s.trim());
    if (s.trim() === '' || !Number.isFinite(n) || n <= 0 || n > 100) throw new InvalidArgumentError(`each percentile must be in (0, 100], got "${s}"`);
    return n;
  });
  return [...new Set(out)].sort((a, b) => a - b);
}

const SLO_KEYS = ['ttft_ms', 'tpot_ms', 'e2el_ms'] as const;

function parseSlo(value: string): Slo {
  const slo: Slo = {};
  for (const part of value.split(',')) {
    const m = /^\s*([a-z0-9_]+)\s*=\s*([^\s,]+)\s*$/i.exec(part);
    if (!m) throw new InvalidArgumentError(`must be key=ms pairs such as ttft_ms=200,tpot_ms=50, got "${part}"`);
    const key = m[1]! as (typeof SLO_KEYS)[number];
    if (!SLO_KEYS.includes(key)) throw new InvalidArgumentError(`unknown SLO "${m[1]}" (use ${SLO_KEYS.join(', ')})`);
    const n = Number(m[2]);
    if (!Number.isFinite(n) || n <= 0 || n > MAX_TIMER_MS) throw new InvalidArgumentError(`${key} must be a number of ms in (0, ${MAX_TIMER_MS}], got "${m[2]}"`);
    slo[key] = n;
  }
  return slo;
}

function parseTtftToken(value: string): TtftToken {
  if (value !== 'content' && value !== 'any') throw new InvalidArgumentError(`must be "content" or "any", got "${value}"`);
  return value;
}

function positiveNumber(name: string): (value: string) => number {
  return boundedNumber(name, Number.MIN_VALUE, 1e6);
}

function boundedNumber(name: string, min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a number in [${min === Number.MIN_VALUE ? '>0' : min}, ${max}], got "${value}"`);
    return n;
  };
}
