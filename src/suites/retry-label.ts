/**
 * The retry label (seed 003): `params.retry` relabels a suite's version `…/retry-N` (N = max_attempts),
 * so its digest changes and a retried run is never taken for a clean one. Pure.
 */
const RETRY_SUFFIX = /\/retry-(\d+)$/;

/** `version` with `/retry-N` appended when retry is on (`max_attempts` given). */
export function withRetryLabel(version: string, max_attempts: number | undefined): string {
  return max_attempts === undefined ? version : `${version}/retry-${max_attempts}`;
}

/**
 * Why two suite versions differ when the difference is only the retry label, e.g.
 * `retry policy differs (retry-3 vs none)`; `null` when they differ otherwise (or not at all).
 */
export function retryDifference(baseline: string | undefined, candidate: string | undefined): string | null {
  if (baseline === undefined || candidate === undefined || baseline === candidate) return null;
  const b = RETRY_SUFFIX.exec(baseline);
  const c = RETRY_SUFFIX.exec(candidate);
  const strip = (v: string): string => v.replace(RETRY_SUFFIX, '');
  if (strip(baseline) !== strip(candidate)) return null;
  const label = (m: RegExpExecArray | null): string => (m ? `retry-${m[1]}` : 'none');
  return `retry policy differs (${label(b)} vs ${label(c)})`;
}
