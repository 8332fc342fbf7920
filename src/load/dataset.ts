import { readFileSync } from 'node:fs';
import { JoulebenchError } from '../core/errors.js';
import type { Case, Suite } from '../core/types.js';
import { LoadColumns } from './columns.js';
import type { LoadRecord } from './metrics.js';
import { seededRng } from './random.js';
import { cutToTokens, loadedTokenizer, type Tokenizer } from './tokenizer.js';
import { summarize } from '../stats/serving-summary.js';

/**
 * A synthetic load workload (`--dataset random`), vLLM `bench serve`'s random dataset: every prompt has a
 * shared prefix of `prefix_len` tokens then an own part of uniform length in
 * [⌊input_len·(1 − range_ratio)⌋, ⌈input_len·(1 + range_ratio)⌉]; every request asks for `output_len` tokens
 * with `ignore_eos`. With `tokenizer` (a GGUF file) every prompt is cut to its token count by that tokenizer
 * (`prompt_lengths: tokenizer`); without, a token is a word of a fixed list (`prompt_lengths: approx-words`).
 */
export interface RandomDataset {
  kind: 'random';
  input_len: number;
  output_len: number;
  range_ratio: number;
  prefix_len: number;
  prompt_lengths: 'approx-words' | 'tokenizer';
  tokenizer?: string;
}

/**
 * ShareGPT conversations (`--dataset sharegpt --data FILE`), as vLLM reads them: of each conversation with two
 * turns or more, the first turn is the prompt and the second's length is the output asked (`max_tokens`, with
 * `ignore_eos`); pairs under 4 tokens either side, prompts over 1024 or both over 2048 are left out; the rest
 * shuffled by the seed. With `--think-time-ms`, a conversation's pairs in turn (see {@link sharegptSuite}).
 * Lengths are counted by `tokenizer` when given (`prompt_lengths: tokenizer`), else in words
 * (`prompt_lengths: approx-words`).
 */
export interface ShareGptDataset {
  kind: 'sharegpt';
  path: string;
  prompt_lengths: 'approx-words' | 'tokenizer';
  tokenizer?: string;
}

export type LoadDataset = RandomDataset | ShareGptDataset;

/** Realised lengths of a synthetic load run beside the asked ones (the block's `dataset`). */
export interface DatasetLengths {
  asked: LoadDataset;
  /**
   * `tokenizer`: the prompts' own tokens, counted by the dataset's tokenizer; else `usage`: the server's
   * `usage.prompt_tokens` (chat template included) when every completed request had it; else none.
   */
  input_len_source: 'tokenizer' | 'usage' | null;
  input: LengthStats | null;
  /** With `input_len_source: tokenizer`, the server's `usage.prompt_tokens` too (null when not every request had it). */
  input_usage?: LengthStats | null;
  output_len_source: 'usage' | 'chunks' | 'mixed' | null;
  output: LengthStats | null;
}

export interface LengthStats {
  mean: number | null;
  p50: number | null;
  p99: number | null;
}

// Short, common words, each one token (with its leading space) in the usual BPE vocabularies.
const WORDS = (
  'the of and to in is it that for on was with as at by be this from or have an they which one you were her all she there would ' +
  'their we him been has when who will more no if out so said what up its about into than them can only other new some could time ' +
  'these two may then do first any my now such like our over man me even most made after also did many before must through back ' +
  'years where much your way well down should because each just those people how too little state good very make world still own see'
).split(' ');

/** The prompts of a random dataset, `n` of them, from `seed`; with a tokenizer, each of exactly its asked tokens where it allows. */
export function randomSuite(d: RandomDataset, n: number, seed: number, tok?: Tokenizer): Suite {
  const rng = seededRng(seed);
  // Every word is at least one token, so k words hold k tokens or more to cut from.
  const words = (k: number): string => Array.from({ length: k }, () => WORDS[Math.floor(rng.uniform() * WORDS.length)]!).join(' ');
  const prefix = d.prefix_len === 0 ? '' : tok ? cutToTokens(tok, words(d.prefix_len), d.prefix_len).text : words(d.prefix_len);
  const low = Math.floor(d.input_len * (1 - d.range_ratio));
  const high = Math.ceil(d.input_len * (1 + d.range_ratio));
  const cases: Case[] = [];
  for (let i = 0; i < n; i++) {
    const len = low + Math.floor(rng.uniform() * (high - low + 1));
    const text = prefix === '' ? words(len) : `${prefix} ${words(len)}`;
    const cut = tok ? cutToTokens(tok, text, d.prefix_len + len) : null;
    cases.push({ id: `random-${i}`, prompt: cut ? cut.text : text, expected: null, dataset: 'random', weight: 1, tags: [], ...(cut ? { prompt_tokens: cut.tokens } : {}) });
  }
  return {
    name: 'random',
    version: `in${d.input_len}-out${d.output_len}-r${d.range_ratio}-p${d.prefix_len}-s${seed}`,
    scorer: 'exact',
    cases,
    source: 'random',
  };
}

/**
 * A ShareGPT file's usable conversations, shuffled by `seed`, at most `n`; E_SUITE naming the file when none.
 * `multiTurn` (`--think-time-ms`): each conversation's pairs (turns 1–2, 3–4, …) while every pair passes the
 * filter, the request's whole context (earlier pairs + this one) within 2048: a case of one turn or more.
 */
export function sharegptSuite(d: ShareGptDataset, n: number, seed: number, tok?: Tokenizer, multiTurn = false): Suite {
  let rows: unknown;
  try {
    rows = JSON.parse(readFileSync(d.path, 'utf8'));
  } catch (e) {
    throw new JoulebenchError('E_SUITE', `sharegpt ${d.path}: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!Array.isArray(rows)) throw new JoulebenchError('E_SUITE', `sharegpt ${d.path}: expected a JSON list of {conversations: [{from, value}, …]}`);
  const count = tok ? tok.count : wordCount;
  const usable: { pairs: { prompt: string; inLen: number; out: number }[]; i: number }[] = [];
  for (const [i, row] of rows.entries()) {
    const turns = (row as { conversations?: unknown } | null)?.conversations;
    if (!Array.isArray(turns)) continue;
    const pairs: { prompt: string; inLen: number; out: number }[] = [];
    for (let k = 0, context = 0; k + 1 < turns.length && (multiTurn || k === 0); k += 2) {
      const [a, b] = [turns[k], turns[k + 1]] as ({ value?: unknown } | null)[];
      if (typeof a?.value !== 'string' || typeof b?.value !== 'string') break;
      const inLen = count(a.value);
      const out = count(b.value);
      context += inLen + out;
      if (inLen < 4 || out < 4 || inLen > 1024 || context > 2048) break;
      pairs.push({ prompt: a.value, inLen, out });
    }
    if (pairs.length > 0) usable.push({ pairs, i });
  }
  if (usable.length === 0) throw new JoulebenchError('E_SUITE', `sharegpt ${d.path}: no conversation with a prompt and a reply of 4 to 1024 ${tok ? 'tokens' : 'words'} (2048 together)`);
  const rng = seededRng(seed);
  for (let i = usable.length - 1; i > 0; i--) {
    const j = Math.floor(rng.uniform() * (i + 1));
    [usable[i], usable[j]] = [usable[j]!, usable[i]!];
  }
  const cases = usable.slice(0, n).map(({ pairs, i }): Case => {
    const [p] = pairs as [(typeof pairs)[number]];
    const base = { id: `sharegpt-${i}`, expected: null, dataset: 'sharegpt', weight: 1, tags: [], max_tokens: p.out, ...(tok ? { prompt_tokens: p.inLen } : {}) };
    return multiTurn ? { ...base, turns: pairs.map((q) => q.prompt), turn_max_tokens: pairs.map((q) => q.out) } : { ...base, prompt: p.prompt };
  });
  return { name: 'sharegpt', version: `s${seed}-n${cases.length}${multiTurn ? '-turns' : ''}`, scorer: 'exact', cases, source: d.path };
}

function wordCount(s: string): number {
  return s.split(/\s+/).filter((w) => w !== '').length;
}

/** The suite a dataset generates for `n` requests or conversations (its tokenizer, if any, loaded by {@link loadTokenizer} first). */
export function datasetSuite(d: LoadDataset, n: number, seed: number, multiTurn = false): Suite {
  const tok = d.tokenizer !== undefined ? loadedTokenizer(d.tokenizer) : undefined;
  return d.kind === 'random' ? randomSuite(d, n, seed, tok) : sharegptSuite(d, n, seed, tok, multiTurn);
}

/** Realised input and output lengths over the completed requests. Pure. */
export function datasetLengths(asked: LoadDataset, input: LoadColumns | readonly LoadRecord[]): DatasetLengths {
  const ins: number[] = [];
  const local: number[] = [];
  const outs: number[] = [];
  let inKnown = true;
  let localKnown = asked.prompt_lengths === 'tokenizer';
  const from = new Set<string>();
  for (const r of LoadColumns.from(input).records()) {
    if (!r.ok) continue;
    if (r.prompt_tokens === null) inKnown = false;
    else ins.push(r.prompt_tokens);
    if (r.tokenizer_tokens === undefined) localKnown = false;
    else local.push(r.tokenizer_tokens);
    if (r.output_tokens !== null) {
      outs.push(r.output_tokens);
      from.add(r.output_tokens_from);
    }
  }
  const stats = (xs: number[]): LengthStats | null => {
    if (xs.length === 0) return null;
    const s = summarize(xs, [50, 99]);
    return { mean: s.mean, p50: s.percentiles['50'] ?? null, p99: s.percentiles['99'] ?? null };
  };
  const inputKnown = inKnown && ins.length > 0;
  const usage = inputKnown ? stats(ins) : null;
  const counted = localKnown && local.length > 0;
  return {
    asked,
    input_len_source: counted ? 'tokenizer' : inputKnown ? 'usage' : null,
    input: counted ? stats(local) : usage,
    ...(counted ? { input_usage: usage } : {}),
    output_len_source: from.size === 0 ? null : from.size === 1 ? ([...from][0] as 'usage' | 'chunks') : 'mixed',
    output: stats(outs),
  };
}
