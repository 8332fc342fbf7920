import type { Llama } from 'node-llama-cpp';
import { JoulebenchError } from '../../core/errors.js';

/** The exact version joulebench pins (package.json `optionalDependencies`). */
export const NODE_LLAMA_CPP_VERSION = '3.21.1';

/** The one line for a missing node-llama-cpp. */
export const NOT_INSTALLED = `the llamacpp target needs the optional dependency node-llama-cpp@${NODE_LLAMA_CPP_VERSION}, which is not installed here (npm install node-llama-cpp@${NODE_LLAMA_CPP_VERSION})`;

type NodeLlamaCpp = typeof import('node-llama-cpp');

type LogListener = (message: string) => void;

/** llama.cpp's log lines go to this one listener (the perf counters are read from them). */
let listener: LogListener | null = null;

/** Sets (or clears) the one listener of llama.cpp's log; returns the previous one. */
export function setLlamaLogListener(l: LogListener | null): LogListener | null {
  const prev = listener;
  listener = l;
  return prev;
}

/** Imports node-llama-cpp, an optional dependency; E_TARGET in one line when it is not installed. `specifier`: tests. */
export async function importNodeLlamaCpp(specifier = 'node-llama-cpp'): Promise<NodeLlamaCpp> {
  try {
    return (await import(specifier)) as NodeLlamaCpp;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new JoulebenchError('E_TARGET', NOT_INSTALLED, { cause: e });
    }
    throw new JoulebenchError('E_TARGET', `node-llama-cpp failed to load: ${firstLine(e)}`, { cause: e });
  }
}

const instances = new Map<string, Promise<Llama>>();

/** One llama.cpp instance per GPU choice and process, from the installed prebuilt binary (never built here); `gpu` false: CPU. */
export function getLlamaInstance(gpu: false | 'auto', specifier = 'node-llama-cpp'): Promise<Llama> {
  const key = `${specifier}\0${gpu}`;
  let p = instances.get(key);
  if (!p) {
    p = (async () => {
      const lib = await importNodeLlamaCpp(specifier);
      let llama: Llama;
      try {
        llama = await lib.getLlama({
          gpu,
          build: 'never',
          logLevel: lib.LlamaLogLevel.info,
          // Warnings and errors still reach stderr; info lines go only to the listener (perf counters).
          logger: (level, message) => {
            listener?.(message);
            if (level === lib.LlamaLogLevel.error || level === lib.LlamaLogLevel.fatal) process.stderr.write(`llama.cpp: ${message}\n`);
          },
        });
      } catch (e) {
        throw new JoulebenchError(
          'E_TARGET',
          `node-llama-cpp has no usable prebuilt llama.cpp binary for ${process.platform}-${process.arch} here (${firstLine(e)}); add it with: joulebench setup llamacpp`,
          { cause: e },
        );
      }
      // 'auto' falls back to the CPU build when the GPU build is missing or fails: a GPU the run would not use is refused.
      if (gpu === 'auto' && llama.gpu === false) {
        const usable = (await lib.getLlamaGpuTypes('supported')).filter((t): t is 'cuda' | 'vulkan' => t === 'cuda' || t === 'vulkan');
        if (usable.length > 0) {
          await llama.dispose();
          throw new JoulebenchError(
            'E_TARGET',
            `--gpu-layers asks for the GPU, but node-llama-cpp loaded its CPU build: its ${usable.join(' or ')} build is not installed or does not load here; add it with: joulebench setup llamacpp --gpu ${usable[0]}`,
          );
        }
      }
      return llama;
    })();
    // A failed attempt is not cached: the next call tries again.
    p.catch(() => instances.delete(key));
    instances.set(key, p);
  }
  return p;
}

/** The first non-empty line of an error's stderr (a child process) or message, npm's warnings skipped; at most 300 characters. */
export function firstLine(e: unknown): string {
  const err = e as { stderr?: unknown; message?: unknown };
  const text = typeof err?.stderr === 'string' && err.stderr.trim() !== '' ? err.stderr : e instanceof Error ? e.message : String(e);
  return (text.split('\n').find((l) => l.trim() !== '' && !/^npm (warn|notice)/.test(l)) ?? 'unknown error').trim().slice(0, 300);
}
