import { z } from 'zod';
import { SCORER_NAMES } from '../scorers/index.js';
import type { ScorerName } from '../core/types.js';

/** One case as written in a suite file. `prompt` xor `turns`. */
export const caseSchema = z
  .object({
    id: z.string().min(1, 'must be a non-empty string'),
    prompt: z.string().min(1, 'must be a non-empty string').optional(),
    turns: z.array(z.string().min(1)).min(1, 'must hold at least one turn').optional(),
    expected: z.string().nullable(),
    dataset: z.string().min(1).optional(),
    choices: z.array(z.string()).optional(),
    weight: z.number().positive('must be > 0').finite().default(1),
    tags: z.array(z.string()).default([]),
    /** Reference answers, one per turn, for a `single-reference` judge. */
    reference: z.array(z.string()).min(1, 'must hold at least one answer').optional(),
    /** This case's scorer, when it differs from the suite's. */
    scorer: z.enum(SCORER_NAMES as [ScorerName, ...ScorerName[]]).optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    if ((c.prompt === undefined) === (c.turns === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['prompt'], message: 'give exactly one of "prompt" or "turns"' });
    }
  });

/** A suite file: an object with cases, or (JSONL, YAML list) the cases alone. */
export const suiteSchema = z
  .object({
    name: z.string().min(1),
    version: z.string().min(1).default('1'),
    scorer: z.enum(SCORER_NAMES as [ScorerName, ...ScorerName[]]).default('substring'),
    description: z.string().optional(),
    cases: z.array(caseSchema).min(1, 'must hold at least one case'),
  })
  .strict();

export type SuiteFile = z.infer<typeof suiteSchema>;

export type CaseFile = z.infer<typeof caseSchema>;
