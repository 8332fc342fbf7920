import type { Triple } from './graph.js';

/** The reference cascade's small fixture data: the constants the `rt-kv-*` cases ask about (normalised on load). */
export const REFERENCE_KV: Record<string, string> = {
  'default port for HTTPS': '443',
  'default port for SSH': '22',
  'speed of light in vacuum in metres per second': '299792458 m/s',
  'ISO 3166-1 alpha-3 code for Germany': 'DEU',
  'ISO 4217 code for the Japanese yen': 'JPY',
  'value of pi to five decimal places': '3.14159',
  "Avogadro's number": '6.02214076 × 10^23 per mole',
};

/** The facts the `rt-graph-*` (and a few `mt` recall) cases need. */
export const REFERENCE_TRIPLES: readonly Triple[] = [
  { subject: 'Australia', predicate: 'capital', object: 'Canberra' },
  { subject: 'France', predicate: 'capital', object: 'Paris' },
  { subject: 'Japan', predicate: 'capital', object: 'Tokyo' },
  { subject: 'Pride and Prejudice', predicate: 'author', object: 'Jane Austen', aliases: ['wrote', 'written by', 'author of'] },
  { subject: 'Hamlet', predicate: 'author', object: 'William Shakespeare', aliases: ['wrote', 'written by', 'author of'] },
  { subject: 'gold', predicate: 'chemical symbol', object: 'Au', aliases: ['symbol'] },
  { subject: 'Mona Lisa', predicate: 'painter', object: 'Leonardo da Vinci', aliases: ['painted', 'painted by'] },
  { subject: 'Saturn', predicate: 'largest moon', object: 'Titan', aliases: ['biggest moon'] },
  { subject: 'Brazil', predicate: 'official language', object: 'Portuguese', aliases: ['language', 'spoken'] },
  { subject: 'penicillin', predicate: 'discoverer', object: 'Alexander Fleming', aliases: ['discovered', 'discovered by'] },
  { subject: 'Sun', predicate: 'closest planet', object: 'Mercury', aliases: ['closest to the'] },
];
