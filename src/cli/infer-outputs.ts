import { prettyJson } from '../core/canonical.js';
import type { InferRunFile } from '../infer/protocol.js';
import { inferTableRows, renderInferTable } from '../infer/table.js';
import type { Renderings } from './outputs.js';

/** `infer --report FILES -o OUT`: the run files in every format `-o` offers (CSV: one row per arm, as the table). */
export function inferRenderings(files: readonly { path: string; file: InferRunFile }[]): Renderings {
  return {
    json: () => prettyJson(files.length === 1 ? files[0]!.file : files.map((f) => ({ path: f.path, file: f.file }))),
    md: async () => {
      const { renderInferMarkdown } = await import('../report/markdown.js');
      return files.map((f) => renderInferMarkdown(f.path, f.file)).join('\n');
    },
    html: async () => {
      const { buildHtmlReport } = await import('../report/html/index.js');
      return buildHtmlReport(files.map((f) => ({ kind: 'infer' as const, label: f.path, origin: f.path, file: f.file, run_id: null })));
    },
    csv: async () => {
      const { toCsv } = await import('../report/csv.js');
      const { head, rows } = inferTableRows(files);
      return toCsv(head, rows);
    },
    jsonl: () => files.flatMap((f) => f.file.arms.map((a) => JSON.stringify({ path: f.path, ...a }))).join('\n') + '\n',
    txt: () => renderInferTable(files),
  };
}
