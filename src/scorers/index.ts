import type { Scorer, ScorerName } from '../core/types.js';
import { choiceScorer } from './choice.js';
import { exactScorer } from './exact.js';
import { judgeScorer } from './judge.js';
import { regexScorer } from './regex.js';
import { substringScorer } from './substring.js';

/** Every built-in scorer, keyed by name: a name missing here fails to compile. */
export const SCORERS: { readonly [K in ScorerName]: Scorer } = {
  substring: substringScorer,
  exact: exactScorer,
  regex: regexScorer,
  choice: choiceScorer,
  judge: judgeScorer,
};

export const SCORER_NAMES = Object.keys(SCORERS) as ScorerName[];

export function getScorer(name: ScorerName): Scorer {
  return SCORERS[name];
}
