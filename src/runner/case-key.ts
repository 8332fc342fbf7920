import type { CaseResult, Phase, ResultsHeader } from '../core/types.js';

/**
 * A case line's key is (phase, pass, index); warmup passes come before scored ones. This is the rank of
 * the phase in that order: the runner aggregates in case order, and so do `report FILE` and the judge.
 */
export function phaseRank(phase: Phase): 0 | 1 {
  return phase === 'warmup' ? 0 : 1;
}

/** Case order: phase (warmup first), then pass, then index. For `Array.prototype.sort`. */
export function compareCaseOrder(a: Pick<CaseResult, 'phase' | 'pass' | 'index'>, b: Pick<CaseResult, 'phase' | 'pass' | 'index'>): number {
  return phaseRank(a.phase) - phaseRank(b.phase) || a.pass - b.pass || a.index - b.index;
}

/** What a results header says its run could have: passes of each phase, and cases; `null` where it does not say. */
export interface CaseLimits {
  /** [warmup, scored] passes; `null` for a load run (its passes cycle the suite) or counts that are not whole numbers. */
  passes: readonly [warmup: number, scored: number] | null;
  /** Cases in the suite (`header.cases`); `null` in files written before the header recorded it. */
  cases: number | null;
}

export function caseLimits(h: ResultsHeader): CaseLimits {
  const whole = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;
  return {
    passes: !('load' in h) && whole(h.warmup) && whole(h.repeats) ? [h.warmup, h.repeats] : null,
    cases: whole(h.cases) ? h.cases : null,
  };
}

/** Before the header is read: nothing is known. */
export const NO_LIMITS: CaseLimits = Object.freeze({ passes: null, cases: null });

/**
 * Why a case line cannot be one of its run's, as one line naming the file and line, or `null` when it
 * can be: a negative pass or index, a pass past the header's warmup or repeats, or an index past the
 * suite's cases. Counted, such a line would be a figure no run measured; every reader of results files
 * refuses it with this message.
 */
export function outsideRunReason(path: string, line: number, r: Pick<CaseResult, 'phase' | 'pass' | 'index'>, limits: CaseLimits): string | null {
  const limit = limits.passes === null ? null : limits.passes[phaseRank(r.phase)];
  const cases = limits.cases;
  if (r.pass >= 0 && r.index >= 0 && (limit === null || r.pass < limit) && (cases === null || r.index < cases)) return null;
  const what = `${path}: line ${line}: a ${r.phase} case line of pass ${r.pass}, index ${r.index}, which the run could not have had`;
  if (r.pass < 0 || r.index < 0) return `${what} (pass and index count from 0)`;
  if (limit !== null && r.pass >= limit) {
    return `${what} (its header says ${r.phase === 'warmup' ? `warmup ${limit}` : `repeats ${limit}`}: ${limit === 0 ? `no ${r.phase} passes` : `passes 0 to ${limit - 1}`})`;
  }
  return `${what} (its header says cases ${cases}: ${cases === 0 ? 'no cases' : `index 0 to ${cases! - 1}`})`;
}
