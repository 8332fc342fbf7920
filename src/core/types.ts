/**
 * The vocabulary of joulebench (DESIGN.md "Vocabulary"). Pure types: no runtime code.
 * Units are in every numeric name: `_ms`, `_j`, `_uj`, `_usd`.
 */

import type { LocalPrices } from './usd-parts.js';

/** The stable stage ids of the reference cascade, in the order they are tried. */
export const STAGE_IDS = ['cache', 'kv', 'graph', 'neural'] as const;
export type StageId = (typeof STAGE_IDS)[number];

/**
 * Where an energy figure came from. Every figure carries one; a missing figure is `null`, never 0.
 * - `rapl` / `nvml` / `amdsmi`: hardware counters; `integrated-power`: sampled power × time.
 * - `powermetrics`: macOS's sampled power (CPU/GPU/ANE) integrated over the window, not a counter.
 * - `model:api`: a published per-request model for a remote endpoint (EcoLogits): never a measurement,
 *   never summed with or compared against a measured source.
 * - `estimate`: a coefficient (e.g. wall × active watts), never a measurement.
 * - `model`: a cost model the target reports itself (a cascade stage, a per-token model).
 * - `mixed`: a total summed from several sources; the parts are listed beside it.
 * - `none`: nothing was measured (the figure is null).
 */
export type EnergySource =
  | 'rapl'
  | 'nvml'
  | 'amdsmi'
  | 'integrated-power'
  | 'powermetrics'
  | 'model:api'
  | 'estimate'
  | 'model'
  | 'composite'
  | 'mixed'
  | 'none';

/** One question of a suite. */
export interface Case {
  id: string;
  /** The prompt as written; absent when `turns` is given. */
  prompt?: string;
  /** Multi-turn conversations; sent as one prompt joined by a literal `Follow-up:` line. */
  turns?: string[];
  /** The expected answer; `null` marks an unscored case (counts for energy and latency only). */
  expected: string | null;
  /** The dataset (suite) this case belongs to. */
  dataset: string;
  /** Multiple-choice options, when the scorer is `choice`. */
  choices?: string[];
  /** Per-correct score factor (seed 000's `mt_bench_score_per_correct`); default 1.0. */
  weight: number;
  tags: string[];
  /** Reference answers, one per turn (MT-Bench's math, reasoning, coding): given to a `single-reference` judge. */
  reference?: string[];
  /** This case's scorer when it differs from the suite's (e.g. `judge` for open-ended cases). */
  scorer?: ScorerName;
  /** Output tokens asked for this case (a load dataset's per-request length); else the target's own. */
  max_tokens?: number;
  /** Output tokens asked of each turn, in a load run's conversation (a ShareGPT conversation's reply lengths). */
  turn_max_tokens?: number[];
  /** The prompt's tokens by a load dataset's tokenizer (the server's chat template not included). */
  prompt_tokens?: number;
}

/** One message of a chat conversation (OpenAI's and Ollama's chat shape). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Names of the built-in scorers (the registry in src/scorers is keyed by this union). */
export type ScorerName = 'substring' | 'exact' | 'regex' | 'choice' | 'judge';

/** A scorer's verdict on one answer. `passed: null` means unscored. */
export interface Verdict {
  passed: boolean | null;
  /** Optional graded score (e.g. a judge's 1–10). */
  score?: number;
  /** What the scorer extracted from the answer (e.g. the choice letter). */
  extracted?: string | null;
}

/** Decides whether an answer is correct. Pure and synchronous. */
export interface Scorer {
  name: ScorerName;
  score(c: Case, answer: string): Verdict;
}

/** A named, versioned list of cases plus its scorer. */
export interface Suite {
  name: string;
  version: string;
  scorer: ScorerName;
  cases: Case[];
  /** Where it was loaded from (a bundled name or a file path), for messages. */
  source: string;
  /** A digest the suite defines itself (MMLU: ids + version, seed 003); default: `suiteDigest`'s. */
  digest?: string;
}

/** The cases of a suite read a batch at a time (a JSONL suite file), never all in memory at once. */
export interface CaseStream {
  /** How many cases each pass over the stream yields. */
  readonly count: number;
  /** The cases in suite order, in batches, read again each call; E_SUITE when they changed since the digest. */
  batches(): Iterable<readonly Case[]>;
}

/** A suite whose cases stream from their file: checked, counted and digested by a first pass over it. */
export interface StreamedSuite extends Omit<Suite, 'cases' | 'digest'> {
  stream: CaseStream;
  digest: string;
  /** Whether some selected case is scored by a judge (the judge needs the cases in memory). */
  judged: boolean;
}

/** An energy figure with its label. */
export interface Energy {
  /** Joules; `null` when unknown. */
  joules: number | null;
  source: EnergySource;
  /** True when the window was shorter than the meter's floor: noise-dominated, not precise. */
  below_floor?: boolean;
  /** Per-domain parts (e.g. `package-0`, `gpu-0`, or cascade stages), each labelled. */
  by_domain?: Record<string, { joules: number | null; source: EnergySource }>;
  /** A modelled figure's uncertainty, J (`model:api`): `joules` is its midpoint. */
  range_j?: { low: number; high: number };
}

/** Token usage as a target reports it; `null` where it did not say. */
export interface Usage {
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** Of `prompt_tokens`, those the provider served from its prompt cache (`usage.prompt_tokens_details.cached_tokens`); absent: not reported. */
  cached_prompt_tokens?: number | null;
  /** Of `completion_tokens`, the reasoning tokens (`usage.completion_tokens_details.reasoning_tokens`); absent: not reported. */
  reasoning_tokens?: number | null;
}

/** What a target knows about how it answered. Everything but `text` is optional. */
export interface Answer {
  text: string;
  /** The stage that resolved the case (cascades); absent: the target is one model, counted `neural`. */
  stage?: string;
  /** Stages tried in order, with the modelled energy each spent (µJ, integer). */
  trace?: { stage: string; hit: boolean; energy_uj: number | null }[];
  usage?: Usage;
  /** Time to first content token (streaming targets), ms. */
  ttft_ms?: number | null;
  /** Time per output token after the first, ms. */
  tpot_ms?: number | null;
  /** A streamed reply's inter-token latencies: every gap between successive token-bearing chunks, ms (vLLM's ITL). */
  itl_ms?: number[];
  /** Energy the target reports itself (source `model` for cost models). */
  energy?: Energy;
  cost_usd?: number | null;
  /** Attempts made, including the first (retry policy). */
  attempts?: number;
  /** Time spent on failed attempts and backoff, ms. */
  retry_overhead_ms?: number;
  /** Free, target-specific facts recorded with the result. */
  meta?: Record<string, unknown>;
}

/** A request to a target. */
export interface AnswerRequest {
  /** The prompt as sent (multi-turn cases already joined). */
  prompt: string;
  case: Case;
  signal?: AbortSignal;
  /** The conversation so far, ending with this turn's user message: for a conversational target, or a judge. */
  messages?: ChatMessage[];
  /** Called as each streamed chunk with output tokens arrives (load runs time TTFT and ITL from it). */
  onChunk?: (kind: 'content' | 'reasoning') => void;
}

/** The system under test. */
export interface Target {
  /** A stable label for reports (e.g. `cascade:reference`, `openai:gpt-4o`). */
  readonly id: string;
  readonly kind: string;
  /** Takes `AnswerRequest.messages`: a multi-turn case is asked turn by turn (else joined with `Follow-up:` lines). */
  readonly conversational?: boolean;
  /**
   * Answers, stages and energies follow from the prompt alone (the reference cascade on echo): with its own
   * energies its report leaves out wall-clock figures, so it is byte-identical run to run.
   */
  readonly deterministic?: boolean;
  /** Answers one prompt; an in-process target may return the Answer itself (no microtask spent on the case). */
  answer(req: AnswerRequest): Answer | Promise<Answer>;
  /** Load runs: builds the request ahead of its planned send time; the returned function sends it, as `answer(req)`. */
  prepare?(req: AnswerRequest): () => Promise<Answer>;
  /** Static facts for the receipt and the config digest (never secrets). */
  describe(): Record<string, unknown>;
  /** Findings about the run a person must see (e.g. llama.cpp threads fighting each other); read after the run. */
  warnings?(): string[];
  close?(): Promise<void>;
  /** `--resume`: rebuild in-process state (a cache) as if it had just given the recorded answer (else a re-warm pass). */
  restore?(req: AnswerRequest, recorded: RecordedAnswer): void;
}

/** The part of a recorded result that `Target.restore` needs. */
export interface RecordedAnswer {
  response: string | null;
  stage: string | null;
  error: { code: string; message: string } | null;
}

/** A stage of a cascade: answers or passes (returns `null`), and says what trying cost. */
export interface StageResult {
  /** The answer, or `null` to pass to the next stage. */
  text: string | null;
  /** Modelled energy of this attempt, integer µJ (spent whether or not it answered); `null` when unknown. */
  energy_uj: number | null;
  usage?: Usage;
  meta?: Record<string, unknown>;
}

export interface Stage {
  readonly id: string;
  tryAnswer(prompt: string, req: AnswerRequest): StageResult | Promise<StageResult>;
  describe(): Record<string, unknown>;
}

/** The phase of a pass: warmup results are recorded, never scored or aggregated. */
export type Phase = 'warmup' | 'scored';

/** One line of the results JSONL: everything known about one case in one pass. */
export interface CaseResult {
  record: 'case';
  phase: Phase;
  /** 0-based pass number within its phase. */
  pass: number;
  /** 0-based index of the case in the suite. */
  index: number;
  case_id: string;
  dataset: string;
  response: string | null;
  stage: string | null;
  expected: string | null;
  passed: boolean | null;
  score: number | null;
  /** What the scorer read from the answer (the `choice` scorer's letter; `null`: it found none); absent for scorers that read nothing out. */
  parsed?: string | null;
  weight: number;
  joules: number | null;
  energy_source: EnergySource;
  below_floor: boolean;
  /** Present when the case's meter window failed its validity checks: why. Its energy is then never summed. */
  energy_invalid?: string;
  /** Wall latency of the successful attempt, ms (sub-ms precision). */
  latency_ms: number;
  ttft_ms: number | null;
  tpot_ms: number | null;
  /**
   * Every gap between successive token-bearing chunks of a streamed reply, from the first content chunk
   * on, ms (vLLM's ITL); absent when the target did not stream or does not time its chunks.
   */
  itl_ms?: number[];
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** See {@link Usage}; written only when the target reported them. */
  cached_prompt_tokens?: number;
  reasoning_tokens?: number;
  cost_usd: number | null;
  /** Sends of the request, the first included; a conversation's is 1 plus every turn's re-sends. */
  attempts: number;
  retry_overhead_ms: number;
  /** Set when the target failed this case; the run goes on. */
  error: { code: string; message: string; status?: number } | null;
  by_domain?: Energy['by_domain'];
  /** The low–high range of a modelled `joules` (`model:api`), J; absent for measured figures. */
  joules_range?: { low: number; high: number };
  trace?: Answer['trace'];
  meta?: Record<string, unknown>;
  /** A multi-turn case asked as a conversation, a request a turn; `response` is the last turn's, the figures are sums. */
  turns?: TurnResult[];
  /**
   * The prompt as the target was sent it: a string, or the chat messages of a conversation's last request
   * (the earlier turns with the model's own answers). Absent when the run stores none (`ResultsHeader.prompts`).
   */
  prompt?: string | ChatMessage[];
}

/** One turn of a multi-turn case asked as a conversation (its own request, meter window and answer). */
export interface TurnResult
  extends Pick<CaseResult, 'response' | 'latency_ms' | 'ttft_ms' | 'prompt_tokens' | 'completion_tokens' | 'joules' | 'energy_source' | 'cost_usd' | 'error'> {
  /** Sends of this turn's request, the first included. */
  attempts: number;
}

/** The first line of a results JSONL: what run the following cases belong to. */
export interface ResultsHeader {
  record: 'header';
  format: 'joulebench-results/1';
  suite: string;
  suite_version: string;
  suite_digest: string;
  target: string;
  config_digest: string;
  warmup: number;
  repeats: number;
  meter: string;
  /** Cases in the suite (a case line's index runs from 0 to cases − 1); absent in files written before it was recorded. */
  cases?: number;
  /** Cases in flight at once; absent in files written before it was recorded (read as 1). */
  concurrency?: number;
  /**
   * Where the suite can be read again (the HTML report's prompts): a bundled suite's name, a suite file's
   * absolute path, or `mt-bench` with `suite_data` and `suite_references`. Absent for mmlu.
   */
  suite_source?: string;
  suite_data?: string;
  suite_references?: string;
  /** Bootstrap resamples of the report's intervals, when not the default 2000 (`run --bootstrap`). */
  bootstrap?: number;
  /** `run --bootstrap-max-units` when not the default 20,000: a whole number, or `"inf"`. */
  bootstrap_max_units?: number | 'inf';
  /** Other arms shared the hardware (`sweep --parallel-arms`): energy attribution is shared. Absent: false. */
  shared?: boolean;
  /** `run --cluster`: the report's intervals resample questions or subjects, not cases. Absent: cases. */
  cluster?: 'question' | 'subject';
  /** Electricity and hardware prices the report's dollars were computed with; absent: none given. */
  prices?: LocalPrices;
  /**
   * Where each case's prompt is: `text` in the case lines (`prompt`), `index` read back from `suite_source`
   * by digest (a bundled suite), `none` not kept (`--no-store-prompts`). Absent in files written before: as `index`.
   */
  prompts?: PromptStorage;
}

export type PromptStorage = 'text' | 'index' | 'none';
