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

/**
 * The passes a results header says its run had, [warmup, scored]; `null` when it does not say: a load
 * run (its passes cycle the suite, as many as its requests need) or a header whose counts are not
 * whole numbers (refused elsewhere where it matters).
 */
export function passLimits(h: ResultsHeader): readonly [warmup: number, scored: number] | null {
  if ('load' in h) return null;
  const whole = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;
  return whole(h.warmup) && whole(h.repeats) ? [h.warmup, h.repeats] : null;
}

/**
 * Why a case line cannot be one of its run's, as one line naming the file and line, or `null` when it
 * can be: a negative pass or index, or a pass past the header's warmup or repeats. Counted, such a
 * line would be a figure no run measured; every reader of results files refuses it with this message.
 */
export function outsideRunReason(path: string, line: number, r: Pick<CaseResult, 'phase' | 'pass' | 'index'>, limits: readonly [number, number] | null): string | null {
  const limit = limits === null ? null : limits[phaseRank(r.phase)];
  if (r.pass >= 0 && r.index >= 0 && (limit === null || r.pass < limit)) return null;
  return (
    `${path}: line ${line}: a ${r.phase} case line of pass ${r.pass}, index ${r.index}, which the run could not have had ` +
    (limit === null || r.pass < limit
      ? '(pass and index count from 0)'
      : `(its header says ${r.phase === 'warmup' ? `warmup ${limit}` : `repeats ${limit}`}: ${limit === 0 ? `no ${r.phase} passes` : `passes 0 to ${limit - 1}`})`)
  );
}
