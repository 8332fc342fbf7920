import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Eight questions of our own in FastChat's question.jsonl form, one per MT-Bench category, each with two
 * turns; math, reasoning and coding also get reference answers in FastChat's answer form. The upstream
 * questions are never bundled (joulebench fetch mt-bench downloads them).
 */
export const QUESTIONS = [
  { question_id: 1, category: 'writing', turns: ['Write a two-line poem about rain on a tin roof.', 'Now make it rhyme.'] },
  { question_id: 2, category: 'roleplay', turns: ['Pretend you are a lighthouse keeper greeting a visitor.', 'The visitor asks about storms. Reply in character.'] },
  { question_id: 3, category: 'reasoning', turns: ['Tom is taller than Ann, and Ann is taller than Bo. Who is shortest?', 'Is Tom taller than Bo?'] },
  { question_id: 4, category: 'math', turns: ['What is 17 times 3?', 'Add 9 to that result.'] },
  { question_id: 5, category: 'coding', turns: ['Write a JavaScript function that reverses a string.', 'Make it handle null by returning an empty string.'] },
  { question_id: 6, category: 'extraction', turns: ['List the years in: "Founded 1998, moved 2004, sold 2019."', 'Return them as a JSON array.'] },
  { question_id: 7, category: 'stem', turns: ['Why does ice float on water?', 'Explain it to a ten-year-old.'] },
  { question_id: 8, category: 'humanities', turns: ['Name one cause of the decline of the Western Roman Empire.', 'Give a second one.'] },
];

export const REFERENCES = [
  { question_id: 3, answer_id: 'r3', model_id: 'ref', choices: [{ index: 0, turns: ['Bo is the shortest.', 'Yes, Tom is taller than Bo.'] }] },
  { question_id: 4, answer_id: 'r4', model_id: 'ref', choices: [{ index: 0, turns: ['51', '60'] }] },
  { question_id: 5, answer_id: 'r5', model_id: 'ref', choices: [{ index: 0, turns: ['s => [...s].reverse().join("")', 's => s == null ? "" : [...s].reverse().join("")'] }] },
];

/** Writes question.jsonl and reference.jsonl into `dir`; returns their paths. */
export function writeMtBench(dir: string): { questions: string; references: string } {
  const questions = join(dir, 'question.jsonl');
  const references = join(dir, 'reference.jsonl');
  writeFileSync(questions, QUESTIONS.map((q) => JSON.stringify(q)).join('\n') + '\n');
  writeFileSync(references, REFERENCES.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return { questions, references };
}
