import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

// Our own MMLU-format items (no real MMLU text is bundled or used).
export const TOY_ROWS = [
  { question: 'What is 2 + 2?', subject: 'toy_math', choices: ['3', '4', '5', '6'], answer: 1 },
  { question: 'Which is a colour?', subject: 'toy_words', choices: ['dog', 'run', 'red', 'sky'], answer: 'C' },
  { question: 'What is 3 × 3?', subject: 'toy_math', choices: ['9', '6', '3', '12'], answer: 0 },
  { question: 'Opposite of up?', subject: 'toy_words', choices: ['left', 'in', 'over', 'down'], answer: '3' },
];

/** A deterministic pseudo-random sequence (an LCG), so generated data is the same on every machine. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = ['alpha', 'beta', 'gamma', 'délta', 'ε', '数', 'comma, inside', 'a "quote"', 'line\nbreak', 'tab\there', '🙂', 'end'];

/** `n` generated questions over `subjects` subjects, with commas, quotes, newlines and non-ASCII text. */
export function generatedRows(n: number, subjects = 7, seed = 1): { question: string; subject: string; choices: string[]; answer: number }[] {
  const rnd = lcg(seed);
  const pick = (): string => WORDS[Math.floor(rnd() * WORDS.length)]!;
  return Array.from({ length: n }, (_, i) => ({
    question: `Q${i}: ${pick()} ${pick()}?`,
    subject: `subj_${i % subjects}`,
    choices: [pick(), pick(), `${i}`, pick()],
    answer: Math.floor(rnd() * 4),
  }));
}

/** One CSV field as Hendrycks' files quote it (only when needed). */
export function csvField(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Writes a large file a megabyte at a time (the generated 200k-row files). */
export function writeLines(path: string, n: number, line: (i: number) => string): void {
  const fd = openSync(path, 'w');
  let chunk = '';
  for (let i = 0; i < n; i++) {
    chunk += line(i);
    if (chunk.length > 1 << 20) {
      writeSync(fd, chunk);
      chunk = '';
    }
  }
  writeSync(fd, chunk);
  closeSync(fd);
}

/** A Hendrycks-style CSV line for a generated row. */
export function csvLine(r: { question: string; choices: string[]; answer: number }): string {
  return [r.question, ...r.choices, 'ABCD'[r.answer]!].map(csvField).join(',') + '\n';
}

/**
 * MMLU data in every form the loader reads, with the awkward cases: CRLF and lone-CR line ends, a
 * BOM, a header row, quoted commas, doubled quotes and newlines, blank lines, ids as strings and
 * numbers, non-ASCII ids, a .jsonl that is one JSON array, `{rows: […]}`, a mixed directory, and
 * generated files long enough to cross read chunks and batches. Returns the paths by name.
 */
export function writeMmluFixtures(dir: string): Record<string, string> {
  const p = (name: string): string => join(dir, name);
  const out: Record<string, string> = {};
  writeFileSync(p('items.jsonl'), TOY_ROWS.map((r) => JSON.stringify(r)).join('\n') + '\n');
  out.jsonl = p('items.jsonl');
  writeFileSync(p('items.json'), JSON.stringify(TOY_ROWS));
  out.json = p('items.json');
  writeFileSync(p('rows.json'), JSON.stringify({ rows: TOY_ROWS }, null, 2));
  out.rows = p('rows.json');
  writeFileSync(p('array.jsonl'), `\n  \n${JSON.stringify(TOY_ROWS, null, 1)}\n`);
  out.arrayJsonl = p('array.jsonl');
  const withIds = [
    { ...TOY_ROWS[0], id: 'astro-001' },
    { ...TOY_ROWS[1], id: 'm\u00e9t\u00e9o-2' },
    { ...TOY_ROWS[2], id: 17 },
    { ...TOY_ROWS[3] },
    { ...TOY_ROWS[0], id: 'astro-\ud83d\ude00', subject: 'toy_math' },
  ];
  writeFileSync(p('ids.jsonl'), '\ufeff' + withIds.map((r) => JSON.stringify(r)).join('\r\n') + '\r\n\r\n');
  out.ids = p('ids.jsonl');

  const csv = p('csv');
  mkdirSync(csv);
  writeFileSync(join(csv, 'toy_math_test.csv'), 'What is 2 + 2?,3,4,5,6,B\n"What is 3 × 3, exactly?",9,6,3,"1""2",A\n');
  writeFileSync(join(csv, 'toy_words_test.csv'), 'question,A,B,C,D,answer\r\n"Which is a\ncolour?",dog,run,red,sky,C\r\nOdd a"b field,x,y,z,w,d\r\n');
  writeFileSync(join(csv, 'bom_dev.csv'), '\ufeffFirst?,a,b,c,d,0\rSecond?,"e",f,g,h,3\r\r\nThird?,i,j,k,"l\r\nm",B');
  out.csv = csv;

  const mixed = p('mixed');
  mkdirSync(mixed);
  writeFileSync(join(mixed, 'a_test.csv'), 'Q1?,a,b,c,d,A\nQ2?,a,b,c,d,B\n');
  writeFileSync(join(mixed, 'b.jsonl'), JSON.stringify({ question: 'Q3?', subject: 'b', choices: ['a', 'b', 'c', 'd'], answer: 2 }) + '\n');
  writeFileSync(join(mixed, 'c.json'), JSON.stringify([{ question: 'Q4?', subject: 'c', choices: ['a', 'b', 'c', 7], answer: 'D', id: 'c-x' }]));
  writeFileSync(join(mixed, 'notes.txt'), 'not data');
  out.mixed = mixed;

  const gen = generatedRows(3000);
  writeFileSync(p('gen.jsonl'), gen.map((r, i) => JSON.stringify(i % 3 === 0 ? { ...r, id: `g${i}` } : r) + (i % 50 === 0 ? '\n\n' : '\n')).join(''));
  out.genJsonl = p('gen.jsonl');
  const genCsv = p('gen');
  mkdirSync(genCsv);
  writeFileSync(join(genCsv, 'generated_test.csv'), 'question,A,B,C,D,answer\n' + gen.map(csvLine).join(''));
  writeFileSync(join(genCsv, 'other_val.csv'), gen.slice(0, 700).map(csvLine).join('').replace(/\n/g, '\r\n'));
  out.genCsv = genCsv;
  return out;
}
