import type { BenchReport } from '../core/aggregate.js';
import type { CaseResult } from '../core/types.js';
import { forEachScoredBatch } from '../runner/scored-batches.js';
import { HTML_CASE_ROWS } from '../report/page-limits.js';
import type { OutputFormat } from './output-file.js';
import type { Renderings } from './outputs.js';

/** What `run -o FILE` can write. */
export const RUN_FORMATS: readonly OutputFormat[] = ['json', 'md', 'html', 'csv', 'jsonl', 'txt'];

/** A finished run in every format `-o` offers; per-case formats stream the results file again rather than hold every case. */
export function runRenderings(input: { report: BenchReport; reportJson: string; resultsPath: string; receipt: Record<string, unknown>; label: string }): Renderings {
  const eachBatch = (each: (batch: CaseResult[]) => void): void => forEachScoredBatch(input.resultsPath, each);
  return {
    json: () => input.reportJson,
    md: async () => (await import('../report/markdown.js')).renderReportMarkdown(input.report, { title: `joulebench · ${input.label}`, receipt: input.receipt }),
    html: async () => {
      const { loadRuns } = await import('../report/load-inputs.js');
      const cases = loadRuns([input.resultsPath], null, { cases: true, casesLimit: HTML_CASE_ROWS })[0]!;
      // The header too, so the page can show each case's prompt as `report FILE --html` does.
      const { results, scored_total, case_latency_ms, header } = cases;
      const run = { label: input.label, origin: input.resultsPath, report: input.report, results, scored_total, case_latency_ms, header, receipt: input.receipt, run_id: null };
      return (await import('../report/html/index.js')).buildHtmlReport([run]);
    },
    csv: async () => {
      const { casesCsvHeader, casesCsvRows } = await import('../report/csv.js');
      return {
        stream: (write) => {
          write(casesCsvHeader());
          eachBatch((batch) => write(casesCsvRows(input.label, batch)));
        },
      };
    },
    jsonl: () => ({ stream: (write) => eachBatch((batch) => write(batch.map((r) => JSON.stringify(r) + '\n').join(''))) }),
    txt: async () => (await import('../report/table.js')).renderReportTable(input.report),
  };
}
