import type { CaseResult } from '../core/types.js';
import { NumberColumn, nearestRanks } from '../core/number-column.js';

/** Nearest-rank latency percentiles over scored cases that did not fail, ms. */
export type CaseLatency = Record<'p50' | 'p95' | 'p99', number | null>;

/** The first `limit` scored cases whole, as they stream past, and every scored case's latency. */
export class FirstCases {
  readonly cases: CaseResult[] = [];
  private total = 0;
  private readonly latency = new NumberColumn();

  constructor(private readonly limit: number) {}

  readonly add = (r: CaseResult): void => {
    this.total++;
    if (r.error === null) this.latency.push(r.latency_ms);
    if (this.cases.length < this.limit) this.cases.push(r);
  };

  summary(): { scored_total: number; case_latency_ms: CaseLatency } {
    const [p50, p95, p99] = nearestRanks(this.latency, [50, 95, 99]);
    return { scored_total: this.total, case_latency_ms: { p50: p50 ?? null, p95: p95 ?? null, p99: p99 ?? null } };
  }
}
