import type { CaseResult, Phase, ResultsHeader } from '../core/types.js';

/** The phase's rank in case order (phase, pass, index; warmup first), which the runner, `report FILE` and the judge aggregate in. */
export function phaseRank(phase: Phase): 0 | 1 {
  return phase === 'warmup' ? 0 : 1;
}

/** Case order: phase (warmup first), then pass, then index. For `Array.prototype.sort`. */
export function compareCaseOrder(a: Pick<CaseResult, 'phase' | 'pass' | 'index'>, b: Pick<CaseResult, 'phase' | 'pass' | 'index'>): number {
  return phaseRank(a.phase) - phaseRank(b.phase) || a.pass - b.pass || a.index - b.index;
}

/**
 * What a results header says its run could have: passes of each phase and cases, each `Infinity`
 * where it does not say (a load run's passes cycle its suite; a file written before the header
 * recorded `cases`; counts that are not whole numbers, refused elsewhere where it matters).
 */
export interface CaseLimits {
  readonly warmup: number;
  readonly scored: number;
  readonly cases: number;
}

export function caseLimits(h: ResultsHeader): CaseLimits {
  const whole = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;
  const passes = !('load' in h) && whole(h.warmup) && whole(h.repeats);
  return { warmup: passes ? h.warmup : Infinity, scored: passes ? h.repeats : Infinity, cases: whole(h.cases) ? h.cases : Infinity };
}

/** Before the header is read: nothing is known (a plain object like caseLimits' own, so `withinRun` sees one shape). */
export const NO_LIMITS: CaseLimits = { warmup: Infinity, scored: Infinity, cases: Infinity };

/** Whether a case line can be its run's: pass and index from 0, within the header's passes and cases (run on every line). */
export function withinRun(r: Pick<CaseResult, 'phase' | 'pass' | 'index'>, limits: CaseLimits): boolean {
  return r.pass >= 0 && r.index >= 0 && r.index < limits.cases && r.pass < (r.phase === 'warmup' ? limits.warmup : limits.scored);
}

/** Why a case line that is not {@link withinRun} cannot be its run's, naming the file and line (every reader refuses it). */
export function outsideRunReason(path: string, line: number, r: Pick<CaseResult, 'phase' | 'pass' | 'index'>, limits: CaseLimits): string {
  const what = `${lineOf(path, line, r)}, which the run could not have had`;
  if (r.pass < 0 || r.index < 0) return `${what} (pass and index count from 0)`;
  const limit = r.phase === 'warmup' ? limits.warmup : limits.scored;
  if (r.pass >= limit) return `${what} (its header says ${r.phase === 'warmup' ? `warmup ${limit}` : `repeats ${limit}`}: ${limit === 0 ? `no ${r.phase} passes` : `passes 0 to ${limit - 1}`})`;
  return `${what} (its header says cases ${limits.cases}: ${limits.cases === 0 ? 'no cases' : `index 0 to ${limits.cases - 1}`})`;
}

/**
 * Why a case line whose index is past the suite's `count` cases cannot be this suite's run (`--resume`
 * knows the suite; a header written before it recorded `cases` does not say).
 */
export function pastSuiteReason(path: string, line: number, r: Pick<CaseResult, 'phase' | 'pass' | 'index'>, count: number): string {
  return `${lineOf(path, line, r)}, which this suite could not have had (it has ${count} case${count === 1 ? '' : 's'}: index 0 to ${count - 1})`;
}

function lineOf(path: string, line: number, r: Pick<CaseResult, 'phase' | 'pass' | 'index'>): string {
  return `${path}: line ${line}: a ${r.phase} case line of pass ${r.pass}, index ${r.index}`;
}
