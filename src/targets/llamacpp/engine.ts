import { statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { ChatWrapper, Llama, LlamaChatSession, LlamaContext, LlamaContextSequence, LlamaModel } from 'node-llama-cpp';
import { JoulebenchError } from '../../core/errors.js';
import { firstLine, getLlamaInstance, importNodeLlamaCpp, setLlamaLogListener } from './binding.js';
import { parseLlamaPerf } from './perf.js';
import { capAtIdle, defaultCpuRoot, defaultThreadChoice, idleCpus, type ThreadChoice } from './threads.js';

/** How a GGUF model is loaded and run in-process. */
export interface LlamaEngineOptions {
  model_path: string;
  /** Threads for evaluation; absent: the physical cores this process may use ({@link defaultThreadChoice}). */
  threads?: number;
  /** How `threads` was chosen, when a caller resolved the default once for several engines; default `configured`. */
  threads_source?: string;
  /** Root the CPU files are read under for the default (tests); `$JOULEBENCH_CPU_ROOT` or `/`. */
  cpu_root?: string;
  /** Context size, tokens; default the smaller of the model's training context and 4096. */
  ctx?: number;
  /** Layers offloaded to a GPU; default 0 (CPU only: the GPU backend is not even loaded). */
  gpu_layers?: number;
  /** Module to import instead of `node-llama-cpp` (tests of the failure messages only). */
  module?: string;
  /** Caps every context's thread count (`llama.maxThreads`, process-wide). */
  max_threads?: number;
}

/** Per generation: what the library counted, plus client timestamps of each token. */
export interface LlamaGeneration {
  text: string;
  /** Tokens of the prompt after the GGUF's chat template was applied. */
  prompt_tokens: number;
  /** Prompt tokens llama.cpp evaluated in this call (its prompt-eval counter). */
  prompt_tokens_evaluated: number;
  /** Prompt tokens served from the context's KV cache (a prefix left by an earlier call): not prefilled. */
  prompt_tokens_reused: number;
  /** llama.cpp's prompt-eval time, ms. */
  prefill_ms: number;
  /** Tokens generated (node-llama-cpp's token meter), = the tokens in `text`. */
  decode_tokens: number;
  /** llama.cpp's single-token evaluations in this call (its eval counter). */
  decode_evals: number;
  /** llama.cpp's eval time, ms. */
  decode_ms: number;
  /** Request start to the first generated token, ms (client clock). */
  ttft_ms: number | null;
  /** Request start to the end of generation, ms. */
  e2e_ms: number;
  /** Each generated token's arrival, ms after request start. */
  token_times_ms: number[];
  threads_used: number;
  stop_reason: string;
}

/** A loaded model with one context sequence; generations on it reuse its KV cache for a shared prefix. */
export class LlamaEngine {
  /** Wall time of the last model load plus context creation, ms. */
  load_ms = 0;
  private model: LlamaModel | null = null;
  private context: LlamaContext | null = null;
  private sequence: LlamaContextSequence | null = null;
  private session: LlamaChatSession | null = null;
  private llama: Llama | null = null;
  private wrapper: ChatWrapper | null = null;
  threads: ThreadChoice;
  /** Set while the default still awaits its idle-CPU cap (taken once, at the first load). */
  private idleCheck: { root: string; allowed: number[] | null } | null = null;
  info: { parameter_count: number | null; file_bytes: number; train_ctx: number; ctx: number; gpu: string; gpu_layers: number; chat_wrapper: string } | null = null;

  constructor(readonly opts: LlamaEngineOptions) {
    if (opts.threads !== undefined) this.threads = { threads: opts.threads, threads_source: opts.threads_source ?? 'configured' };
    else {
      const root = opts.cpu_root ?? defaultCpuRoot();
      const { allowed, ...choice } = defaultThreadChoice({ root });
      this.threads = choice;
      this.idleCheck = { root, allowed };
    }
    const cap = opts.max_threads;
    if (cap !== undefined && cap > 0 && this.threads.threads > cap) {
      this.threads = { threads: cap, threads_source: `${this.threads.threads_source}; capped at max_threads ${cap}` };
    }
  }

  /** The thread count, the default capped once at the CPUs found idle (the first load does it). */
  async resolveThreads(): Promise<ThreadChoice> {
    if (this.idleCheck) {
      const { root, allowed } = this.idleCheck;
      this.idleCheck = null;
      this.threads = capAtIdle(this.threads, await idleCpus(root, allowed));
    }
    return this.threads;
  }

  /** Loads the model and creates a fresh context (a cold start); returns the load time in ms. */
  async load(): Promise<number> {
    await this.unload();
    await this.resolveThreads();
    const gpuLayers = this.opts.gpu_layers ?? 0;
    const lib = await importNodeLlamaCpp(this.opts.module);
    this.llama = await getLlamaInstance(gpuLayers > 0 ? 'auto' : false, this.opts.module);
    // One llama.cpp instance per process (its log callback is global): the cap is set on it, for every engine.
    if (this.opts.max_threads !== undefined) this.llama.maxThreads = this.opts.max_threads;
    // The library caps a context's threads at maxThreads (max(4, its core count) by default): raise it to a count asked for.
    else if (this.llama.maxThreads !== 0 && this.llama.maxThreads < this.threads.threads) this.llama.maxThreads = this.threads.threads;
    let file_bytes: number;
    try {
      file_bytes = statSync(this.opts.model_path).size;
    } catch (e) {
      throw new JoulebenchError('E_INPUT', `--model-path ${this.opts.model_path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
    }
    const t0 = performance.now();
    try {
      this.model = await this.llama.loadModel({ modelPath: this.opts.model_path, gpuLayers });
    } catch (e) {
      throw new JoulebenchError('E_INPUT', `--model-path ${this.opts.model_path}: llama.cpp could not load it as a GGUF model (${firstLine(e)})`, { cause: e });
    }
    const train_ctx = this.model.trainContextSize;
    const ctx = this.opts.ctx ?? Math.min(train_ctx, 4096);
    try {
      this.context = await this.model.createContext({
        contextSize: ctx,
        threads: { ideal: this.threads.threads, min: this.threads.threads },
        performanceTracking: true,
      });
    } catch (e) {
      throw new JoulebenchError('E_TARGET', `llama.cpp could not create a context of ${ctx} tokens for ${this.opts.model_path} (${firstLine(e)})`, { cause: e });
    }
    this.load_ms = performance.now() - t0;
    this.sequence = this.context.getSequence();
    // The GGUF's own template as Jinja, resolved once and outside the load time (the automatic choice takes seconds).
    if (!this.wrapper) {
      const template = this.model.fileInfo.metadata?.tokenizer?.chat_template;
      this.wrapper = typeof template === 'string' && template !== '' ? lib.resolveChatWrapper(this.model, { type: 'jinjaTemplate' }) : lib.resolveChatWrapper(this.model);
    }
    this.session = new lib.LlamaChatSession({ contextSequence: this.sequence, chatWrapper: this.wrapper });
    this.info = {
      parameter_count: parameterCount(this.model),
      file_bytes,
      train_ctx,
      ctx,
      gpu: String(this.llama.gpu),
      gpu_layers: this.model.gpuLayers,
      chat_wrapper: this.session.chatWrapper.wrapperName,
    };
    // Counters start from zero for the first generation.
    await this.readPerf();
    return this.load_ms;
  }

  /** One chat-templated generation: the prompt is the only message (no history from earlier calls). */
  async generate(prompt: string, g: { max_tokens: number; temperature: number; seed: number }, signal?: AbortSignal): Promise<LlamaGeneration> {
    if (!this.session || !this.sequence || !this.context || !this.model) await this.load();
    const session = this.session!;
    const sequence = this.sequence!;
    const context = this.context!;
    session.setChatHistory([]);
    const state = session.chatWrapper.generateContextState({ chatHistory: [{ type: 'user', text: prompt }, { type: 'model', response: [] }] });
    const prompt_tokens = state.contextText.tokenize(this.model!.tokenizer).length;
    if (prompt_tokens + g.max_tokens > context.contextSize) {
      // llama.cpp would shift the context and drop part of the prompt: the answer would be to a different question.
      throw new JoulebenchError(
        'E_INPUT',
        `the prompt is ${prompt_tokens} tokens after the chat template, plus max_tokens ${g.max_tokens}, but the context holds ${context.contextSize} (raise --ctx, up to the model's ${this.info?.train_ctx ?? '?'})`,
      );
    }
    const meter0 = sequence.tokenMeter.getState();
    const token_times_ms: number[] = [];
    const t0 = performance.now();
    let text: string;
    let stop_reason: string;
    try {
      const r = await session.promptWithMeta(prompt, {
        maxTokens: g.max_tokens,
        temperature: g.temperature,
        seed: g.seed,
        ...(signal ? { signal, stopOnAbortSignal: false } : {}),
        onToken: (tokens) => {
          const now = performance.now() - t0;
          for (let i = 0; i < tokens.length; i++) token_times_ms.push(now);
        },
      });
      text = r.responseText;
      stop_reason = r.stopReason;
    } catch (e) {
      await this.readPerf();
      throw new JoulebenchError('E_TARGET', `llama.cpp generation failed: ${firstLine(e)}`, { cause: e });
    }
    const e2e_ms = performance.now() - t0;
    const perf = await this.readPerf();
    // llama.cpp prints max(1, n): a printed 1 with no time is nothing evaluated.
    const prompt_tokens_evaluated = perf.prompt_eval_ms > 0 ? perf.prompt_eval_tokens_printed : 0;
    return {
      text,
      prompt_tokens,
      prompt_tokens_evaluated,
      prompt_tokens_reused: Math.max(0, prompt_tokens - prompt_tokens_evaluated),
      prefill_ms: perf.prompt_eval_ms,
      decode_tokens: sequence.tokenMeter.diff(meter0).usedOutputTokens,
      decode_evals: perf.eval_ms > 0 ? perf.eval_runs_printed : 0,
      decode_ms: perf.eval_ms,
      ttft_ms: token_times_ms[0] ?? null,
      e2e_ms,
      token_times_ms,
      threads_used: context.currentThreads,
      stop_reason,
    };
  }

  /** Decode rate at one thread on a second small context, tok/s (client clock: errs low); `null` under two tokens. */
  async probeOneThread(tokens = 8): Promise<number | null> {
    if (!this.model) await this.load();
    const model = this.model!;
    const probe = await model.createContext({ contextSize: Math.min(256, model.trainContextSize), threads: { ideal: 1, min: 1 } });
    try {
      const seq = probe.getSequence();
      const times: number[] = [];
      for await (const _ of seq.evaluate(model.tokenize('The'), { temperature: 0 })) {
        times.push(performance.now());
        if (times.length >= tokens) break;
      }
      if (times.length < 2) return null;
      return (times.length - 1) / ((times[times.length - 1]! - times[0]!) / 1000);
    } finally {
      await probe.dispose();
    }
  }

  /** Reads and resets llama.cpp's perf counters of the context (printed through the log). */
  private async readPerf(): Promise<NonNullable<ReturnType<typeof parseLlamaPerf>>> {
    const lines: string[] = [];
    const prev = setLlamaLogListener((m) => lines.push(m));
    let perf: ReturnType<typeof parseLlamaPerf> = null;
    try {
      await this.context!.printTimings();
      // The log reaches JS through the addon's queue, possibly after printTimings() returned: wait for it (≤ 2 s).
      for (let waited = 0; (perf = parseLlamaPerf(lines.join('\n'))) === null && waited < 2000; waited += 5) {
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      setLlamaLogListener(prev);
    }
    if (!perf) throw new JoulebenchError('E_TARGET', 'llama.cpp printed no readable performance counters (llama_perf_context_print): timings would be guesses, so none are reported');
    return perf;
  }

  /** Frees the context and the model (the next generation loads them again). */
  async unload(): Promise<void> {
    const ctx = this.context;
    const model = this.model;
    this.session = null;
    this.sequence = null;
    this.context = null;
    this.model = null;
    await ctx?.dispose();
    await model?.dispose();
  }
}

/** Parameters in the GGUF: the sum over its tensors of the product of their dimensions. */
function parameterCount(model: Pick<LlamaModel, 'fileInfo'>): number | null {
  const tensors = model.fileInfo.tensorInfo;
  if (!tensors || tensors.length === 0) return null;
  let n = 0;
  for (const t of tensors) n += t.dimensions.reduce<number>((a, d) => a * Number(d), 1);
  return n;
}
