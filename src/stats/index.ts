/** Pure statistics for deciding between systems: intervals, tests, paired comparisons. */
export { type Interval, type IntervalMethod, type IntervalResult, type NoInterval, isInterval } from './interval.js';
export { wilson } from './wilson.js';
export { mcnemar, binomialHalfCdf, type McNemarResult } from './mcnemar.js';
export { bootstrapCi, bootstrapCis, percentileInterval, ratioStatistic, meanStatistic, percentileStatistics, DEFAULT_RESAMPLES, DEFAULT_BOOTSTRAP_MAX_UNITS, type BootstrapOptions, type ResampleStatistic } from './bootstrap.js';
export { ratioDeltaInterval, woodruffIntervals } from './large-sample.js';
export { pairedComparison, type PairedCase, type PairedComparison, type PairedFigure, type PairedOptions } from './paired.js';
export { PairedColumns } from './paired-columns.js';
export { reportCi, CI_FIGURES, type CaseColumns, type ReportCi } from './report-ci.js';
export { spreadOf, type Spread } from './describe.js';
export { seededRng } from './rng.js';
export { normalQuantile } from './normal.js';
export { passAtK, passHatK, passAtKCurve, resolutionUnderBudget, type PassAtKPoint, type TaskRollouts } from './pass-at-k.js';
export { holmAdjust, adjustPValues, type PAdjust } from './holm.js';
export { mcnemarSampleSize, pairedMeanSampleSize, powerPlan, pilotCasesOf, type PilotCase, type PilotResult, type PowerPlan, type PowerRow } from './power.js';
export { studentTCdf, studentTQuantile, tInterval, pairedTInterval, coefficientOfVariation, type TInterval } from './student-t.js';
