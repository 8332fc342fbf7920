import type { BenchReport } from '../core/aggregate.js';
import type { CaseResult } from '../core/types.js';
import { readResultsFile } from '../runner/results-file.js';
import type { OutputFormat } from './output-file.js';
import type { Renderings } from './outputs.js';

/** What `run -o FILE` can write. */
export const RUN_FORMATS: readonly OutputFormat[] = ['json', 'md', 'html', 'csv', 'jsonl', 'txt'];

/**
 * A finished run in every format `-o` offers: the report JSON, Markdown, the HTML page, the per-case
 * results as CSV or JSONL (scored passes, read back from the results file), or the terminal table.
 */
export function runRenderings(input: { report: BenchReport; reportJson: string; resultsPath: string; receipt: Record<string, unknown>; label: string }): Renderings {
  let scored: CaseResult[] | null = null;
  const results = (): CaseResult[] => (scored ??= readResultsFile(input.resultsPath).results.filter((r) => r.phase === 'scored'));
  const run = () => ({ label: input.label, origin: input.resultsPath, report: input.report, results: results(), receipt: input.receipt, run_id: null });
  return {
    json: () => input.reportJson,
    md: async () => (await import('../report/markdown.js')).renderReportMarkdown(input.report, { title: `joulebench · ${input.label}`, receipt: input.receipt }),
    html: async () => (await import('../report/html/index.js')).buildHtmlReport([run()]),
    csv: async () => (await import('../report/csv.js')).casesCsv([{ label: input.label, results: results() }]),
    jsonl: () => results().map((r) => JSON.stringify(r)).join('\n') + (results().length ? '\n' : ''),
    txt: async () => (await import('../report/table.js')).renderReportTable(input.report),
  };
}
