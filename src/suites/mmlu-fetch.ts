import { JoulebenchError } from '../core/errors.js';

/** Where the rows come from: the Hugging Face dataset viewer's JSON API (paged, 100 rows a page). */
export const MMLU_ROWS_API = 'https://datasets-server.huggingface.co/rows';

export interface FetchMmluOptions {
  /** `test` (default), `validation`, `dev`. */
  split?: string;
  /** The API base (tests point it at a loopback server). */
  api?: string;
  /** Injected fetch (default: the global one). */
  fetchFn?: typeof fetch;
  /** Called after each page with rows so far and the total. */
  onPage?: (done: number, total: number) => void;
}

/** Downloads cais/mmlu (config `all`) as JSONL rows `{question, subject, choices, answer}`, for `--suite mmlu --data`. */
export async function fetchMmluJsonl(opts: FetchMmluOptions = {}): Promise<string> {
  const split = opts.split ?? 'test';
  const f = opts.fetchFn ?? fetch;
  const lines: string[] = [];
  let total = Infinity;
  for (let offset = 0; offset < total; offset += 100) {
    const url = `${opts.api ?? MMLU_ROWS_API}?dataset=cais%2Fmmlu&config=all&split=${encodeURIComponent(split)}&offset=${offset}&length=100`;
    let res: Response;
    try {
      res = await f(url);
    } catch (e) {
      throw new JoulebenchError('E_RUN', `fetch mmlu: cannot reach ${new URL(url).host} (${(e as Error).message}); the MMLU loader reads local files, so copy the data in by other means`);
    }
    if (!res.ok) throw new JoulebenchError('E_RUN', `fetch mmlu: HTTP ${res.status} at offset ${offset}`);
    const page = (await res.json()) as { rows?: { row?: Record<string, unknown> }[]; num_rows_total?: number };
    if (!Array.isArray(page.rows) || typeof page.num_rows_total !== 'number') throw new JoulebenchError('E_RUN', `fetch mmlu: unexpected reply at offset ${offset}`);
    total = page.num_rows_total;
    if (page.rows.length === 0) break;
    for (const { row } of page.rows) {
      if (!row) continue;
      lines.push(JSON.stringify({ question: row.question, subject: row.subject, choices: row.choices, answer: row.answer }));
    }
    opts.onPage?.(lines.length, total);
  }
  return lines.join('\n') + '\n';
}
