import { appendFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical.js';
import { JoulebenchError } from '../core/errors.js';
import type { ChatMessage } from '../core/types.js';
import { readTextFile } from '../read-text.js';

/** What a judge said about one prompt, with what asking it cost; stored once per key. */
export interface CachedJudgement {
  key: string;
  judge: string;
  prompt_hash: string;
  /** The judge's whole reply (its explanation and verdict); null when it failed. */
  text: string | null;
  rating: number | null;
  choice: 'A' | 'B' | 'C' | null;
  /** `judge_error` after an unparsable verdict asked twice, or the judge target's error code. */
  error: { code: string; message: string } | null;
  requests: number;
  joules: number | null;
  energy_source: string;
  cost_usd: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
}

/** A judgement's cache key: sha256 of the judge model, prompt hash and the exact messages it is sent. */
export function judgementKey(judge: string, prompt_hash: string, messages: readonly ChatMessage[]): string {
  return 'sha256:' + createHash('sha256').update(canonicalJson({ judge, prompt_hash, messages })).digest('hex');
}

/** Judgements on disk, a JSON line each, appended as made; a failed one is kept but asked again next time. */
export class JudgementCache {
  private readonly map = new Map<string, CachedJudgement>();

  /** `path` null: memory only. */
  constructor(readonly path: string | null) {
    if (path === null || !existsSync(path)) return;
    const text = readTextFile(path, 'E_INPUT', { where: `judgement cache ${path}` });
    const end = text.lastIndexOf('\n') + 1; // a torn last line (killed mid-write) is ignored
    text
      .slice(0, end)
      .split('\n')
      .forEach((line, i) => {
        if (line.trim() === '') return;
        let j: CachedJudgement;
        try {
          j = JSON.parse(line) as CachedJudgement;
        } catch (e) {
          throw new JoulebenchError('E_INPUT', `judgement cache ${path}: line ${i + 1}: not valid JSON (${(e as Error).message})`);
        }
        if (typeof j?.key !== 'string') throw new JoulebenchError('E_INPUT', `judgement cache ${path}: line ${i + 1}: key must be a string`);
        // A cached verdict becomes a score without asking anyone: it must be one the parser could have read.
        const ratingOk = j.rating === null || (typeof j.rating === 'number' && j.rating >= 1 && j.rating <= 10);
        const choiceOk = j.choice === null || j.choice === 'A' || j.choice === 'B' || j.choice === 'C';
        if (!ratingOk || !choiceOk || (j.error !== null && typeof j.error !== 'object') || (j.error === null && j.rating === null && j.choice === null)) {
          throw new JoulebenchError('E_INPUT', `judgement cache ${path}: line ${i + 1}: not a judgement joulebench wrote (rating must be 1–10, choice A, B or C)`);
        }
        if (j.error === null) this.map.set(j.key, j);
      });
  }

  /** A usable (error-free) judgement for the key, if any. */
  get(key: string): CachedJudgement | undefined {
    return this.map.get(key);
  }

  put(j: CachedJudgement): void {
    if (j.error === null) this.map.set(j.key, j);
    if (this.path === null) return;
    mkdirSync(dirname(this.path), { recursive: true });
    appendFileSync(this.path, JSON.stringify(j) + '\n');
  }

  get size(): number {
    return this.map.size;
  }
}
