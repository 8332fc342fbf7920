import { createHash } from 'node:crypto';
import { JoulebenchError } from '../core/errors.js';
import type { Answer, AnswerRequest, Target } from '../core/types.js';
import { readTextFile } from '../read-text.js';

/** A recorded answer: its text, and the stage that gave it when the recording says. */
interface Recorded {
  text: string;
  stage: string | null;
  /** Each turn's answer, when the case was asked as a conversation. */
  turns?: string[];
}

/** The error a replay throws for a case it has no answer for (recorded on that case; the run goes on). */
export class MissingAnswerError extends Error {
  readonly code = 'E_REPLAY_MISSING';
  constructor(id: string, source: string) {
    super(`no recorded answer for case "${id}" in ${source}`);
  }
}

/** Reads recorded answers from a results JSONL (first scored, non-errored line per case), an `{id, answer}` fixture or FastChat's `model_answer/<model>.jsonl`. */
export function readRecordedAnswers(path: string): Map<string, Recorded> {
  const text = readTextFile(path, 'E_INPUT', { where: `replay ${path}` });
  let rows: { row: unknown; where: string }[];
  if (text.trimStart().startsWith('[')) {
    let arr: unknown;
    try {
      arr = JSON.parse(text);
    } catch (e) {
      throw new JoulebenchError('E_INPUT', `replay ${path}: not valid JSON (${(e as Error).message})`);
    }
    rows = (arr as unknown[]).map((row, i) => ({ row, where: `item ${i}` }));
  } else {
    rows = [];
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        rows.push({ row: JSON.parse(line), where: `line ${i + 1}` });
      } catch (e) {
        throw new JoulebenchError('E_INPUT', `replay ${path}: line ${i + 1}: not valid JSON (${(e as Error).message})`);
      }
    });
  }
  const out = new Map<string, Recorded>();
  for (const { row, where } of rows) {
    const r = (row ?? {}) as Record<string, unknown>;
    if (r.record === 'case') {
      if (r.phase !== 'scored' || r.error !== null || typeof r.response !== 'string' || typeof r.case_id !== 'string') continue;
      if (out.has(r.case_id)) continue;
      const rec: Recorded = { text: r.response, stage: typeof r.stage === 'string' ? r.stage : null };
      const turns = Array.isArray(r.turns) ? (r.turns as { response?: unknown }[]).map((t) => t?.response) : null;
      if (turns && turns.every((t): t is string => typeof t === 'string')) rec.turns = turns;
      out.set(r.case_id, rec);
      continue;
    }
    // Other lines of a results file (header, resume, rewarm, end) carry no answers.
    if (typeof r.record === 'string') continue;
    if ('question_id' in r && 'choices' in r) {
      const { id, turns } = fastChatAnswer(r, `replay ${path}: ${where}`);
      if (!out.has(id)) out.set(id, { text: turns[turns.length - 1]!, stage: null, turns });
      continue;
    }
    if (typeof r.id !== 'string' || r.id === '') throw new JoulebenchError('E_INPUT', `replay ${path}: ${where}: id must be a non-empty string`);
    if (typeof r.answer !== 'string') throw new JoulebenchError('E_INPUT', `replay ${path}: ${where}: answer must be a string`);
    if (!out.has(r.id)) out.set(r.id, { text: r.answer, stage: null });
  }
  return out;
}

/** A FastChat model answer (`model_answer/<model>.jsonl`: question_id, choices[0].turns) as the MT-Bench case it answers. */
function fastChatAnswer(r: Record<string, unknown>, where: string): { id: string; turns: string[] } {
  const qid = r.question_id;
  if (!(typeof qid === 'number' && Number.isInteger(qid)) && !(typeof qid === 'string' && qid !== '')) throw new JoulebenchError('E_INPUT', `${where}: question_id must be an integer or a non-empty string`);
  const turns = Array.isArray(r.choices) ? (r.choices[0] as { turns?: unknown } | undefined)?.turns : undefined;
  if (!Array.isArray(turns) || turns.length === 0 || !turns.every((t) => typeof t === 'string')) {
    throw new JoulebenchError('E_INPUT', `${where}: choices[0].turns must be a non-empty list of strings`);
  }
  return { id: `mt-bench-${qid}`, turns: turns as string[] };
}

/** Answers from recorded answers, so a suite is re-scored offline; no energy, tokens or cost (none were spent). */
export function createReplayTarget(path: string): Target {
  const answers = readRecordedAnswers(path);
  // A recording of conversations is replayed turn by turn, so each turn keeps its own answer.
  const conversational = [...answers.values()].some((a) => a.turns !== undefined);
  return {
    id: 'replay',
    kind: 'replay',
    conversational,
    async answer(req: AnswerRequest): Promise<Answer> {
      const a = answers.get(req.case.id);
      if (!a) throw new MissingAnswerError(req.case.id, path);
      const turn = req.messages ? req.messages.filter((m) => m.role === 'user').length - 1 : null;
      const text = turn === null ? a.text : a.turns?.[turn];
      if (text === undefined) throw new MissingAnswerError(`${req.case.id}" turn "${turn! + 1}`, path);
      return a.stage === null ? { text } : { text, stage: a.stage };
    },
    describe: () => ({ kind: 'replay', answers: path, answer_count: answers.size }),
  };
}

/** `mode: mock` without answers: each case gets `"ABCD"[sha256(case id)[0] mod 4]`, so the pipeline runs offline. */
export function createMockTarget(): Target {
  return {
    id: 'mock',
    kind: 'mock',
    async answer(req: AnswerRequest): Promise<Answer> {
      return { text: mockAnswer(req.case.id) };
    },
    describe: () => ({ kind: 'mock', answers: 'ABCD[sha256(case id)[0] mod 4]' }),
  };
}

/** The mock's answer to a case: a letter A–D from the first byte of the SHA-256 of its id. */
export function mockAnswer(caseId: string): string {
  return 'ABCD'[createHash('sha256').update(caseId).digest()[0]! % 4]!;
}
