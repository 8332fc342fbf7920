import { createHash } from 'node:crypto';
import { JoulebenchError } from '../core/errors.js';
import { FASTCHAT_JUDGE_PROMPTS_SHA256 } from '../judge/prompt-set.js';

/** The FastChat commit the MT-Bench files are pinned to (lm-sys/FastChat, April 2025). */
export const MT_BENCH_COMMIT = '0e6d3e4beaab66f4d3f93db72541a4abab8af28d';

/** One pinned file: where it is, what its bytes hash to, and the local name it is written under. */
export interface PinnedFile {
  url: string;
  sha256: string;
  name: string;
}

const DATA = `https://raw.githubusercontent.com/lm-sys/FastChat/${MT_BENCH_COMMIT}/fastchat/llm_judge/data`;
const RAW = `${DATA}/mt_bench`;

/** The 80 questions, GPT-4's reference answers (30: math, reasoning, coding) and the judge prompts, as FastChat publishes them. */
export const MT_BENCH_FILES: readonly PinnedFile[] = [
  { url: `${RAW}/question.jsonl`, sha256: '119565adbab82227089cefdb44c8d7e2cf04dc0a0ec233634c82e7d4e2a944f7', name: 'question.jsonl' },
  {
    url: `${RAW}/reference_answer/gpt-4.jsonl`,
    sha256: 'f957a5bc977badb66885ec970e6cd08527845780313f0995764260e5777b9b3f',
    name: 'reference.jsonl',
  },
  { url: `${DATA}/judge_prompts.jsonl`, sha256: FASTCHAT_JUDGE_PROMPTS_SHA256, name: 'judge_prompts.jsonl' },
];

interface FetchMtBenchOptions {
  /** Injected fetch (default: the global one). */
  fetchFn?: typeof fetch;
  /** The files (tests pin their own). */
  files?: readonly PinnedFile[];
}

/** Downloads MT-Bench's question, reference and judge-prompt files at the pinned commit, each refused unless its sha256 is the pinned one. */
export async function fetchMtBench(opts: FetchMtBenchOptions = {}): Promise<{ name: string; bytes: Buffer; sha256: string }[]> {
  const f = opts.fetchFn ?? fetch;
  const out: { name: string; bytes: Buffer; sha256: string }[] = [];
  for (const file of opts.files ?? MT_BENCH_FILES) {
    let res: Response;
    try {
      res = await f(file.url, { redirect: 'error' });
    } catch (e) {
      throw new JoulebenchError('E_RUN', `fetch mt-bench: cannot reach ${new URL(file.url).host} (${(e as Error).message}); --suite mt-bench reads local files, so copy question.jsonl in by other means`);
    }
    if (!res.ok) throw new JoulebenchError('E_RUN', `fetch mt-bench: HTTP ${res.status} for ${file.url}`);
    const bytes = Buffer.from(await res.arrayBuffer());
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    if (sha256 !== file.sha256) {
      throw new JoulebenchError('E_RUN', `fetch mt-bench: ${file.url} has sha256 ${sha256}, the pinned file has ${file.sha256}: refused (nothing written)`);
    }
    out.push({ name: file.name, bytes, sha256 });
  }
  return out;
}
