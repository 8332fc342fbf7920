import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { JoulebenchError } from '../core/errors.js';
import { joulebenchHome } from '../home.js';

/** The columns listed for each run after `id`, in table order, with their SQLite types. */
const COLUMNS = {
  /** When the row was written, UTC (Z-stamped). */
  recorded_utc: 'TEXT NOT NULL',
  started_utc: 'TEXT',
  finished_utc: 'TEXT',
  /** The report's `format` (e.g. `joulebench-report/1`), so other report kinds can share the table. */
  kind: 'TEXT NOT NULL',
  suite: 'TEXT',
  suite_digest: 'TEXT',
  config_digest: 'TEXT',
  target: 'TEXT',
  meter: 'TEXT',
  case_count: 'INTEGER',
  accuracy_pct: 'REAL',
  joules_per_correct: 'REAL',
  usd_per_correct: 'REAL',
  latency_p95_ms: 'REAL',
  energy_source: 'TEXT',
  below_floor_count: 'INTEGER',
  report_path: 'TEXT',
  results_path: 'TEXT',
  receipt_path: 'TEXT',
  /** The sweep this run belongs to (its receipt's `labels.sweep_id`), else null. */
  sweep_id: 'TEXT',
} as const;

type ColumnValue<T> = T extends 'TEXT NOT NULL' ? string : T extends 'TEXT' ? string | null : number | null;

/** One run as the history database keeps it; numbers are copied out of the report for listing. */
export type HistoryRun = { id: number } & { -readonly [K in keyof typeof COLUMNS]: ColumnValue<(typeof COLUMNS)[K]> };

/** A run with its stored documents. */
export interface HistoryEntry extends HistoryRun {
  report: Record<string, unknown>;
  receipt: Record<string, unknown> | null;
}

/** What a caller hands over to record a run. */
export interface HistoryInput {
  report: Record<string, unknown>;
  receipt?: Record<string, unknown> | null;
  config_digest?: string | null;
  paths?: { report?: string | null; results?: string | null; receipt?: string | null };
  /** Listed columns set by the caller, for report kinds whose fields are named differently (code, infer). */
  fields?: Partial<Omit<HistoryRun, 'id' | 'recorded_utc' | 'started_utc' | 'finished_utc' | 'kind' | 'config_digest' | `${string}_path` | 'sweep_id'>>;
}

/** The short kind of a stored run from its `format`: `suite`, `code`, `infer`, or the format itself. */
export function historyKind(format: string): string {
  if (format === 'joulebench-report/1' || format === 'joulebench-report/1.1') return 'suite';
  if (format === 'joulebench-code-results/1') return 'code';
  if (format === 'joulebench-infer/1') return 'infer';
  return format;
}

/** `$JOULEBENCH_HOME/history.sqlite`, or `~/.joulebench/history.sqlite`. */
export function defaultHistoryPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(joulebenchHome(env), 'history.sqlite');
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  ${Object.entries(COLUMNS).map(([name, type]) => `${name} ${type},`).join('\n  ')}
  report_json TEXT NOT NULL,
  receipt_json TEXT
);
CREATE INDEX IF NOT EXISTS runs_suite_digest ON runs (suite_digest);
`;

const LIST_COLUMNS = ['id', ...Object.keys(COLUMNS)].join(', ');

/**
 * The run history: one SQLite file (better-sqlite3, loaded lazily). WAL, a busy timeout and one IMMEDIATE
 * transaction per insert, so two runs finishing at once both land: the second waits for the write lock.
 */
export class History {
  private constructor(
    readonly path: string,
    private readonly db: BetterSqlite3.Database,
  ) {}

  /** Opens (creating if needed) the database at `path`. */
  static async open(path: string = defaultHistoryPath(), opts: { busyTimeout_ms?: number; readonly?: boolean } = {}): Promise<History> {
    const { default: Database } = await import('better-sqlite3');
    try {
      // Read-only (`view`): the file as it is, never created or migrated.
      if (opts.readonly) return new History(path, new Database(path, { readonly: true, fileMustExist: true, timeout: opts.busyTimeout_ms ?? 15_000 }));
      mkdirSync(dirname(path), { recursive: true });
      const db = new Database(path, { timeout: opts.busyTimeout_ms ?? 15_000 });
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      // IMMEDIATE: two processes opening at once would otherwise both see sweep_id missing and both ALTER.
      db.transaction(() => {
        db.exec(SCHEMA);
        // Databases written before sweeps lack the sweep column: add it in place.
        const cols = db.prepare('PRAGMA table_info(runs)').all() as { name: string }[];
        if (!cols.some((c) => c.name === 'sweep_id')) db.exec('ALTER TABLE runs ADD COLUMN sweep_id TEXT');
        db.exec('CREATE INDEX IF NOT EXISTS runs_sweep_id ON runs (sweep_id)');
      }).immediate();
      return new History(path, db);
    } catch (e) {
      throw new JoulebenchError('E_CONFIG', `history ${path}: cannot open (${(e as Error).message}); set JOULEBENCH_HOME or pass --no-history`);
    }
  }

  /** Opens the database at `path`, records one run, closes it; returns the run's id. */
  static async recordOnce(input: HistoryInput, path: string = defaultHistoryPath()): Promise<number> {
    const h = await History.open(path);
    try {
      return h.record(input);
    } finally {
      h.close();
    }
  }

  /** Records a run; returns its id. */
  record(input: HistoryInput): number {
    const r = input.report;
    const suite = (r.suite ?? null) as { name?: unknown; digest?: unknown } | null;
    const receipt = input.receipt ?? null;
    const row = {
      recorded_utc: new Date().toISOString(),
      started_utc: str(receipt?.started_utc),
      finished_utc: str(receipt?.finished_utc),
      kind: str(r.format) ?? 'unknown',
      suite: str(suite?.name) ?? str(r.suite),
      suite_digest: str(suite?.digest) ?? str(r.dataset_digest),
      config_digest: input.config_digest ?? str(receipt?.config_digest),
      target: str(r.target),
      meter: str(r.meter),
      case_count: num(r.case_count),
      accuracy_pct: num(r.accuracy_pct),
      joules_per_correct: num(r.joules_per_correct),
      usd_per_correct: num(r.usd_per_correct),
      latency_p95_ms: num(r.latency_p95_ms),
      energy_source: str(r.energy_source),
      below_floor_count: num(r.below_floor_count),
      report_path: input.paths?.report ?? null,
      results_path: input.paths?.results ?? null,
      receipt_path: input.paths?.receipt ?? null,
      report_json: JSON.stringify(r),
      receipt_json: receipt ? JSON.stringify(receipt) : null,
      sweep_id: str((receipt?.labels as Record<string, unknown> | undefined)?.sweep_id),
      ...input.fields,
    };
    const cols = Object.keys(row);
    const insert = this.db.prepare(`INSERT INTO runs (${cols.join(', ')}) VALUES (${cols.map((c) => '@' + c).join(', ')})`);
    return this.db.transaction(() => Number(insert.run(row).lastInsertRowid)).immediate();
  }

  /** Runs, newest first. */
  list(opts: { limit?: number; suiteDigest?: string; sweepId?: string } = {}): HistoryRun[] {
    const conds = [...(opts.suiteDigest ? ['suite_digest = @digest'] : []), ...(opts.sweepId ? ['sweep_id = @sweep'] : [])];
    const where = conds.length ? `WHERE ${conds.join(' AND ')}` : '';
    const stmt = this.db.prepare(`SELECT ${LIST_COLUMNS} FROM runs ${where} ORDER BY id DESC LIMIT @limit`);
    return stmt.all({ limit: opts.limit ?? -1, ...(opts.suiteDigest ? { digest: opts.suiteDigest } : {}), ...(opts.sweepId ? { sweep: opts.sweepId } : {}) }) as HistoryRun[];
  }

  /** One run with its report and receipt, or null. */
  get(id: number): HistoryEntry | null {
    const row = this.db.prepare(`SELECT ${LIST_COLUMNS}, report_json, receipt_json FROM runs WHERE id = ?`).get(id) as
      | (HistoryRun & { report_json: string; receipt_json: string | null })
      | undefined;
    if (!row) return null;
    const { report_json, receipt_json, ...run } = row;
    return { ...run, report: JSON.parse(report_json) as Record<string, unknown>, receipt: receipt_json ? (JSON.parse(receipt_json) as Record<string, unknown>) : null };
  }

  /** The newest run's id, or null when the history is empty. */
  latestId(): number | null {
    return (this.db.prepare('SELECT MAX(id) AS id FROM runs').get() as { id: number | null }).id;
  }

  close(): void {
    this.db.close();
  }
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
