/**
 * llama.cpp's counters as `llama_perf_context_print` writes them. It prints `max(1, n)` for both counts,
 * so a printed 1 with 0.00 ms means nothing: token counts come from node-llama-cpp's token meter.
 */
interface LlamaPerf {
  /** Prompt evaluation (batches of more than one token), ms. */
  prompt_eval_ms: number;
  /** Tokens in those batches, as printed (at least 1). */
  prompt_eval_tokens_printed: number;
  /** Single-token evaluations (decode steps), ms. */
  eval_ms: number;
  /** Single-token evaluations, as printed (at least 1). */
  eval_runs_printed: number;
}

const PROMPT = /prompt eval time\s*=\s*([0-9.]+)\s*ms\s*\/\s*(\d+)\s*tokens/;
const EVAL = /(?<!prompt )eval time\s*=\s*([0-9.]+)\s*ms\s*\/\s*(\d+)\s*runs/;

/** Parses the printed counters; `null` when a line is missing or a figure is not a finite number. */
export function parseLlamaPerf(text: string): LlamaPerf | null {
  const p = PROMPT.exec(text);
  const e = EVAL.exec(text);
  if (!p || !e) return null;
  const out = {
    prompt_eval_ms: Number(p[1]),
    prompt_eval_tokens_printed: Number(p[2]),
    eval_ms: Number(e[1]),
    eval_runs_printed: Number(e[2]),
  };
  return Object.values(out).every((v) => Number.isFinite(v) && v >= 0) ? out : null;
}
