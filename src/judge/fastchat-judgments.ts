import { z } from 'zod';
import { readJsonl } from '../suites/mt-bench.js';

// FastChat's published single-answer judgments summarised as show_result.py does (score -1 rows dropped).

const lineSchema = z
  .object({
    question_id: z.union([z.number().int(), z.string().min(1)], { error: 'must be an integer or a non-empty string' }),
    model: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
    judge: z.array(z.string({ error: 'must be strings' }), { error: 'must be [judge model, prompt name]' }).min(1, 'must name the judge'),
    score: z.number({ error: 'must be a number' }).finite('must be finite'),
    turn: z.number({ error: 'must be 1 or 2' }).int('must be 1 or 2').min(1, 'must be 1 or 2').max(2, 'must be 1 or 2'),
  })
  .loose();

/** One model's row of the leaderboard table: means over `ratings` rows (null when it has none). */
export interface LeaderboardRow {
  model: string;
  /** Where the row comes from: a judgments file, or a joulebench run. */
  source: string;
  turn_1: number | null;
  turn_2: number | null;
  average: number | null;
  ratings: number;
}

export interface JudgmentsSummary {
  judgments: string;
  /** The judge models and prompt names in the file. */
  judges: string[];
  /** Rows with score -1 (FastChat's "no verdict"), left out as show_result.py leaves them out. */
  dropped: number;
  models: LeaderboardRow[];
}

const mean = (xs: readonly number[]): number | null => (xs.length === 0 ? null : Math.round((xs.reduce((t, v) => t + v, 0) / xs.length) * 1e6) / 1e6);

/** Reads a FastChat judgments JSONL (a problem is one line naming the file, line and key) and summarises it per model. */
export function summariseJudgments(path: string): JudgmentsSummary {
  const byModel = new Map<string, { t1: number[]; t2: number[] }>();
  const judges = new Set<string>();
  let dropped = 0;
  for (const { row } of readJsonl(path, lineSchema, 'E_INPUT', 'judgments')) {
    judges.add(row.judge.join(' / '));
    if (row.score === -1) {
      dropped++;
      continue;
    }
    const m = byModel.get(row.model) ?? { t1: [], t2: [] };
    (row.turn === 1 ? m.t1 : m.t2).push(row.score);
    byModel.set(row.model, m);
  }
  const models = [...byModel].map(([model, m]) => ({
    model,
    source: path,
    turn_1: mean(m.t1),
    turn_2: mean(m.t2),
    average: mean([...m.t1, ...m.t2]),
    ratings: m.t1.length + m.t2.length,
  }));
  return { judgments: path, judges: [...judges].sort(), dropped, models: sortRows(models) };
}

/** Highest average first, as show_result.py sorts its average table. */
export function sortRows(rows: LeaderboardRow[]): LeaderboardRow[] {
  return rows.sort((a, b) => (b.average ?? -Infinity) - (a.average ?? -Infinity) || a.model.localeCompare(b.model));
}
