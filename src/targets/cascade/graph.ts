import type { Stage, StageResult } from '../../core/types.js';
import { normalizeText } from './normalize.js';

/** A subject–predicate–object fact, with the phrasings that ask for the predicate. */
export interface Triple {
  subject: string;
  predicate: string;
  object: string;
  /** Phrases that name the predicate in a question ("wrote" for `author`); the predicate itself always counts. */
  aliases?: string[];
}

/** Stage 3: a triple store; a question naming a subject and one of its predicates is answered, longest subject first. */
export class GraphStage implements Stage {
  readonly id = 'graph';
  /** Each subject's triples, with the phrases (padded with spaces) that ask for their predicate. */
  private readonly bySubject = new Map<string, { triple: Triple; phrases: string[] }[]>();
  private readonly maxSubjectWords: number;
  private readonly energyUj: number;
  readonly size: number;

  /** `energy_uj`: modelled energy of one query, µJ. */
  constructor(triples: readonly Triple[], opts: { energy_uj?: number } = {}) {
    let maxWords = 1;
    for (const t of triples) {
      const key = normalizeText(t.subject);
      maxWords = Math.max(maxWords, key.split(' ').length);
      const phrases = [t.predicate, ...(t.aliases ?? [])].map((p) => ` ${normalizeText(p)} `);
      const list = this.bySubject.get(key) ?? [];
      list.push({ triple: t, phrases });
      this.bySubject.set(key, list);
    }
    this.maxSubjectWords = maxWords;
    this.size = triples.length;
    this.energyUj = opts.energy_uj ?? 50_000;
  }

  tryAnswer(prompt: string): StageResult {
    return { text: this.query(prompt)?.object ?? null, energy_uj: this.energyUj };
  }

  /** The matching triple, or undefined. */
  query(question: string): Triple | undefined {
    const norm = normalizeText(question);
    const words = norm.split(' ');
    const padded = ` ${norm} `;
    // Longest n-grams first, so the most specific subject wins.
    for (let n = Math.min(this.maxSubjectWords, words.length); n >= 1; n--) {
      for (let i = 0; i + n <= words.length; i++) {
        const candidates = this.bySubject.get(words.slice(i, i + n).join(' '));
        if (!candidates) continue;
        for (const c of candidates) {
          if (c.phrases.some((p) => padded.includes(p))) return c.triple;
        }
      }
    }
    return undefined;
  }

  describe(): Record<string, unknown> {
    return { stage: 'graph', triples: this.size, energy_uj: this.energyUj };
  }
}
