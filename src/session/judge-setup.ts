import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { JudgeConfig } from '../config/schema.js';
import { JoulebenchError } from '../core/errors.js';
import type { Target } from '../core/types.js';
import { JudgementCache } from '../judge/cache.js';
import { Judge } from '../judge/judge.js';
import { BUILTIN_PROMPTS, readPromptSet, type PromptSet } from '../judge/prompt-set.js';
import type { JudgeInfo } from '../judge/summary.js';
import type { Meter } from '../meters/meter.js';
import { createMeter, type MeterOptions } from '../meters/registry.js';
import { defaultHistoryPath } from '../report/history.js';
import { createTarget, type TargetSpec } from '../targets/registry.js';

/** The judge flags `run` and `rescore` share. */
export interface JudgeFlags {
  /** The correctness threshold on the 1–10 score (default: the config's judge.pass, else 7). */
  judgePass?: number;
  /** The judgement cache JSONL (default: judge.cache, else $JOULEBENCH_HOME/judgements.jsonl). */
  judgeCache?: string;
  /** A meter opened around each judge request (default: the judge's own energy figure, or none). */
  judgeMeter?: string;
  /** That meter's settings, resolved from flags and environment by the caller. */
  judgeMeterOptions?: MeterOptions;
  /** Judge prompts in FastChat's form, or `builtin` (default: judge.prompts, else judge_prompts.jsonl beside `data`, else builtin). */
  judgePrompts?: string;
  /** The question file: `joulebench fetch mt-bench` writes judge_prompts.jsonl beside it. */
  data?: string;
}

/** MT-Bench's usual pass mark, stated in every report that uses it. */
export const DEFAULT_JUDGE_PASS = 7;

/** A ready judge, with what the receipt says about it. */
interface JudgeSetup {
  judge: Judge;
  info: JudgeInfo;
  /** For the receipt: the judge target's description (no secrets), mode, prompt hash, cache. */
  describe: Record<string, unknown>;
  close(): Promise<void>;
}

/**
 * Builds the judge from a config's `judge:` block (`where` names the file in messages). The key, when
 * `credentials_ref` names one, is read here from the environment and goes only to the judge target.
 */
export async function createJudgeFromConfig(block: JudgeConfig, where: string, flags: JudgeFlags, env: NodeJS.ProcessEnv): Promise<JudgeSetup> {
  const { mode, pass, cache, credentials_ref, prompts: promptsPath, ...rest } = block;
  const prompts = promptSetFor(flags.judgePrompts ?? promptsPath, flags.data, mode);
  const spec: TargetSpec = { ...rest };
  if (spec.kind === 'openai') spec.max_tokens ??= 2048; // FastChat's own limit for an OpenAI judge: room for the explanation before the verdict
  if (spec.kind === 'ollama') spec.temperature = 0;
  if (spec.kind === 'cascade') throw new JoulebenchError('E_CONFIG', `${where}: judge.kind cannot be a cascade (a judge must be a model)`);
  if (credentials_ref !== undefined) {
    const name = credentials_ref.slice('env:'.length);
    const key = env[name];
    if (key === undefined || key === '') throw new JoulebenchError('E_CONFIG', `${where}: judge.credentials_ref: environment variable ${name} is not set`);
    spec.credentials_ref = credentials_ref;
    spec.api_key = key;
  }
  let target: Target;
  try {
    target = await createTarget(spec);
  } catch (e) {
    if (e instanceof JoulebenchError) throw new JoulebenchError('E_CONFIG', `${where}: judge: ${e.message.replace(/^target\./, 'judge.')}`);
    throw e;
  }
  let meter: Meter | undefined;
  try {
    if (flags.judgeMeter !== undefined) {
      meter = await createMeter(flags.judgeMeter, flags.judgeMeterOptions ?? {});
      const probe = await meter.probe();
      if (!probe.available) throw new JoulebenchError('E_METER', `--judge-meter ${meter.id} cannot read here: ${probe.reason}`);
    }
  } catch (e) {
    // The judge is not handed back, so nothing else would close what it opened.
    await meter?.close?.();
    await target.close?.();
    throw e;
  }
  const cachePath = flags.judgeCache ?? cache ?? join(dirname(defaultHistoryPath(env)), 'judgements.jsonl');
  const judge = new Judge({ target, mode, prompts, cache: new JudgementCache(cachePath), ...(meter ? { meter } : {}) });
  const info: JudgeInfo = { model: judge.id, mode, prompt_hash: judge.prompt_hash, prompts: prompts.label, pass: flags.judgePass ?? pass ?? DEFAULT_JUDGE_PASS };
  return {
    judge,
    info,
    describe: { ...info, temperature: 0, target: target.describe(), cache: cachePath, meter: meter?.id ?? 'judge-reported' },
    async close() {
      await target.close?.();
      await meter?.close?.();
    },
  };
}

/** The judge's prompts: the path given, else the fetched file beside the questions, else joulebench's own (labelled not comparable). */
function promptSetFor(given: string | undefined, data: string | undefined, mode: JudgeConfig['mode']): PromptSet {
  if (given === 'builtin') return BUILTIN_PROMPTS;
  if (given !== undefined) return readPromptSet(given, mode);
  const beside = data === undefined ? null : join(dirname(data), 'judge_prompts.jsonl');
  return beside !== null && existsSync(beside) ? readPromptSet(beside, mode) : BUILTIN_PROMPTS;
}
