/** The retry label (seed 003): `params.retry` relabels a suite's version `…/retry-N`, so a retried run's digest differs. */
const RETRY_SUFFIX = /\/retry-(\d+)$/;

/** `version` with `/retry-N` appended when retry is on (`max_attempts` given). */
export function withRetryLabel(version: string, max_attempts: number | undefined): string {
  return max_attempts === undefined ? version : `${version}/retry-${max_attempts}`;
}

/** `retry policy differs (retry-3 vs none)` when two versions differ only in the retry label, else `null`. */
export function retryDifference(baseline: string | undefined, candidate: string | undefined): string | null {
  if (baseline === undefined || candidate === undefined || baseline === candidate) return null;
  const b = RETRY_SUFFIX.exec(baseline);
  const c = RETRY_SUFFIX.exec(candidate);
  const strip = (v: string): string => v.replace(RETRY_SUFFIX, '');
  if (strip(baseline) !== strip(candidate)) return null;
  const label = (m: RegExpExecArray | null): string => (m ? `retry-${m[1]}` : 'none');
  return `retry policy differs (${label(b)} vs ${label(c)})`;
}
