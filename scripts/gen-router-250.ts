/**
 * Generates src/suites/data/router-250.json, the 250+-case router suite (seed 000 §7.3), from the
 * reference cascade's fixtures and the templates below. Deterministic: the same fixtures and this
 * file always give the same bytes (a seeded shuffle, no clock). Run: `npx tsx scripts/gen-router-250.ts`;
 * `--check` exits 1 when the committed file differs from what this generates.
 *
 * Every case id names the stage the case is meant to land at after one warmup pass of the reference
 * cascade (`r250-<stage>-<family>-<n>`). The cache's admission policy decides two of them: only neural
 * answers to prompts of at most 80 characters are cached, so a short prompt that no store answers
 * lands at `cache` in the scored pass, and a long one stays at `neural`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { REFERENCE_KV, REFERENCE_TRIPLES } from '../src/targets/cascade/fixtures.js';

export interface GeneratedCase {
  id: string;
  prompt: string;
  expected: string | null;
  tags: string[];
}

/** The cache admits prompts up to this many characters (CacheStage's default). */
const CACHE_MAX_PROMPT_CHARS = 80;
const LONG_TAIL = ' Please answer in one short sentence and say where the figure or fact comes from.';

/** Ways to ask for a KV key that normalise to the key itself (case, punctuation, a leading "what is the"). */
const KV_PHRASINGS: ((k: string) => string)[] = [
  (k) => `What is the ${k}?`,
  (k) => `What's the ${k}?`,
  (k) => `Tell me the ${k}.`,
  (k) => `${k}?`,
  (k) => `WHAT IS THE ${k.toUpperCase()}?`,
  (k) => `  what is the ${k.toLowerCase()}  `,
  (k) => `Which is the ${k}?`,
  (k) => `whats the ${k.replace(/ /g, '-')}`,
];

/** Each KV key one word off: a fact the store does not hold and must not answer. */
const KV_NEAR_MISSES: Record<string, string> = {
  'default port for HTTPS': 'default port for HTTP',
  'default port for SSH': 'default port for FTP',
  'speed of light in vacuum in metres per second': 'speed of sound in vacuum in metres per second',
  'ISO 3166-1 alpha-3 code for Germany': 'ISO 3166-1 alpha-2 code for Germany',
  'ISO 4217 code for the Japanese yen': 'ISO 4217 code for the Chinese yuan',
  'value of pi to five decimal places': 'value of pi to four decimal places',
  "Avogadro's number": "Avogadro's constant",
};

/** Questions per predicate, `{S}` the subject: each names the subject and the predicate (or an alias) as words. */
const GRAPH_PHRASINGS: Record<string, string[]> = {
  capital: ['What is the capital of {S}?', '{S}: capital city?', 'Name the capital of {S}.', 'Which city is the capital of {S}?', "Tell me {S}'s capital.", 'capital of {S}'],
  author: ['Who wrote {S}?', 'Who is the author of {S}?', '{S} was written by whom?', 'Name the author of {S}.', 'Tell me who wrote {S}.', '{S}: author?'],
  'chemical symbol': [
    'What is the chemical symbol for {S}?',
    'What is the chemical symbol of {S}?',
    'Give the symbol for {S}.',
    '{S} chemical symbol?',
    'Which symbol does {S} have?',
    'Tell me the chemical symbol of {S}.',
  ],
  painter: ['Who painted the {S}?', 'The {S} was painted by whom?', 'Name the painter of the {S}.', 'Who is the painter of the {S}?', '{S}: painter?', 'Tell me who painted the {S}.'],
  'largest moon': ['What is the largest moon of {S}?', "Which is {S}'s biggest moon?", 'Name the largest moon of {S}.', '{S}: largest moon?', 'Tell me the biggest moon of {S}.', "What is {S}'s largest moon called?"],
  'official language': [
    'What is the official language of {S}?',
    'Which language is spoken in {S}?',
    'What language do people speak in {S}?',
    'Name the official language of {S}.',
    '{S}: official language?',
    'Tell me the language of {S}.',
  ],
  discoverer: ['Who discovered {S}?', '{S} was discovered by whom?', 'Name the discoverer of {S}.', 'Who is the discoverer of {S}?', 'Tell me who discovered {S}.', '{S}: discoverer?'],
  'closest planet': [
    'What is the closest planet to the {S}?',
    'Which planet is closest to the {S}?',
    'Name the planet closest to the {S}.',
    '{S}: closest planet?',
    'Tell me the closest planet to the {S}.',
    'Which planet orbits closest to the {S}?',
  ],
};

/** Subjects the graph does not hold, asked with a predicate it knows: must not hit. */
const GRAPH_NEAR_MISSES = [
  'What is the capital of Canada?',
  'Who wrote Macbeth?',
  'What is the chemical symbol for silver?',
  'Who painted the Night Watch?',
  'What is the largest moon of Jupiter?',
  'What is the official language of Argentina?',
  'Who discovered insulin?',
  'Which planet is closest to Mars?',
  'What is the capital of Peru?',
  'Who wrote Emma?',
];

/**
 * Long open questions that mention a subject and a predicate the graph holds but ask something else.
 * The graph's word matching answers them anyway: they are meant for `neural` and land at `graph`.
 * Kept as findings (docs/mt-bench.md lists them), not tuned away.
 */
export const GRAPH_TRAPS = [
  'Apart from Canberra, which Australian city was considered as a possible capital of Australia before 1908?',
  'Which moon of Saturn is the second largest moon after the famous one, and how big is it compared with ours?',
  'Who wrote the best-known modern parody of Hamlet, and in which decade was it first performed on a stage?',
  'What language did the Dutch colonists who held parts of northern Brazil in the 1600s speak at home with family?',
  'Besides the Mona Lisa, which other portrait painted by the same artist hangs in the Louvre today, and since when?',
];

/** Short echo tasks: answered by neural in the warmup pass, then served from the cache. */
const CACHE_VERBS = ['Repeat exactly:', 'Echo back:', 'Repeat after me:', 'Say back:'];
const CACHE_PHRASES = ['blue kettle', 'night shift', 'gate seven', 'ok 200', 'paper crane', 'north ridge', 'tea at four', 'all clear', 'zero drift', 'green light', 'copy that', 'lamp on', 'river stone', 'code amber', 'quiet hours', 'dock nine', 'fresh batch', 'slow lane', 'wind check', 'last call'];
const CACHE_REPEATS = 3;

/** Open generation prompts, all longer than the cache admits, naming no subject the graph holds. */
const NEURAL_FORMS = ['short story', 'limerick', 'product description', 'friendly email', 'haiku sequence'];
const NEURAL_TOPICS = ['a lighthouse keeper who collects lost umbrellas', 'a city bus that refuses to leave the depot', 'a bakery that only opens at midnight', 'a cat who audits spreadsheets', 'the first snowfall in a desert town', 'a robot learning to knit', 'a library with no books left', 'a mountain village with one telephone'];
const NEURAL_AUDIENCES = ['for a ten-year-old reader', 'for a sleepy commuter'];

/** Mulberry32: a small seeded PRNG, so the shuffle is the same on every machine. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function slug(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

const GRAPH_SUBJECT_WORDS = REFERENCE_TRIPLES.map((t) => t.subject.toLowerCase());

/** Every case, in a seeded shuffled order (repeats of a cached prompt come in several orders). */
export function generateRouter250(): GeneratedCase[] {
  const out: GeneratedCase[] = [];
  // KV paraphrases: the store must still answer.
  Object.entries(REFERENCE_KV).forEach(([key, value], k) => {
    KV_PHRASINGS.forEach((phrase, p) => out.push({ id: `r250-kv-para-${k + 1}-${p + 1}`, prompt: phrase(key), expected: value, tags: ['kv', 'paraphrase'] }));
  });
  // KV near-misses: short ones are cached after warmup, long ones stay neural.
  Object.keys(REFERENCE_KV).forEach((key, k) => {
    const miss = KV_NEAR_MISSES[key]!;
    const short = `What is the ${miss}?`;
    if (short.length > CACHE_MAX_PROMPT_CHARS) throw new Error(`near-miss too long for the cache: ${short}`);
    out.push({ id: `r250-cache-kvmiss-${k + 1}`, prompt: short, expected: null, tags: ['cache', 'near-miss', 'kv'] });
    out.push({ id: `r250-neural-kvmiss-${k + 1}`, prompt: short + LONG_TAIL, expected: null, tags: ['neural', 'near-miss', 'kv'] });
  });
  // Graph paraphrases.
  REFERENCE_TRIPLES.forEach((t) => {
    const phrasings = GRAPH_PHRASINGS[t.predicate];
    if (!phrasings) throw new Error(`no phrasings for predicate ${t.predicate}`);
    phrasings.forEach((p, j) => out.push({ id: `r250-graph-para-${slug(t.subject)}-${j + 1}`, prompt: p.replace('{S}', t.subject), expected: t.object, tags: ['graph', 'paraphrase'] }));
  });
  // Graph near-misses: subjects the graph does not hold.
  GRAPH_NEAR_MISSES.forEach((q, i) => {
    out.push({ id: `r250-cache-graphmiss-${i + 1}`, prompt: q, expected: null, tags: ['cache', 'near-miss', 'graph'] });
    if (i < 6) out.push({ id: `r250-neural-graphmiss-${i + 1}`, prompt: q + LONG_TAIL, expected: null, tags: ['neural', 'near-miss', 'graph'] });
  });
  GRAPH_TRAPS.forEach((q, i) => {
    if (q.length <= CACHE_MAX_PROMPT_CHARS) throw new Error(`trap short enough to be cached: ${q}`);
    out.push({ id: `r250-neural-graphtrap-${i + 1}`, prompt: q, expected: null, tags: ['neural', 'near-miss', 'graph-trap'] });
  });
  // Cache: each short echo prompt three times.
  CACHE_PHRASES.forEach((phrase, i) => {
    const prompt = `${CACHE_VERBS[i % CACHE_VERBS.length]} ${phrase}`;
    for (let r = 1; r <= CACHE_REPEATS; r++) out.push({ id: `r250-cache-echo-${i + 1}-${r}`, prompt, expected: phrase, tags: ['cache', 'repeat', 'echo-task'] });
  });
  // Neural: open prompts longer than the cache admits.
  let n = 0;
  for (const form of NEURAL_FORMS) {
    for (const topic of NEURAL_TOPICS) {
      const audience = NEURAL_AUDIENCES[n % NEURAL_AUDIENCES.length]!;
      const prompt = `Write a ${form} about ${topic} ${audience}, in under one hundred words, and end it with a question.`;
      const words = ` ${prompt.toLowerCase().replace(/[^a-z0-9]+/g, ' ')} `;
      if (GRAPH_SUBJECT_WORDS.some((s) => words.includes(` ${s} `))) throw new Error(`neural prompt names a graph subject: ${prompt}`);
      if (prompt.length <= CACHE_MAX_PROMPT_CHARS) throw new Error(`neural prompt short enough to be cached: ${prompt}`);
      out.push({ id: `r250-neural-open-${++n}`, prompt, expected: null, tags: ['neural', 'open'] });
    }
  }
  // Seeded Fisher–Yates.
  const rand = prng(250);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The suite file's text: one case per line, so a diff shows exactly which cases changed. */
export function router250Json(): string {
  const cases = generateRouter250();
  const head = {
    name: 'router-250',
    version: '1',
    scorer: 'substring',
    description:
      'Router suite v1 (seed 000 §7.3): paraphrases the KV and graph stores must still answer, near-misses that must not hit them, repeated short prompts for the cache and long open prompts for neural. Generated by scripts/gen-router-250.ts from the reference cascade fixtures; each id names its intended stage. Written for joulebench; CC-BY-4.0.',
  };
  const lines = cases.map((c) => '    ' + JSON.stringify(c));
  return `{\n  "name": ${JSON.stringify(head.name)},\n  "version": ${JSON.stringify(head.version)},\n  "scorer": ${JSON.stringify(head.scorer)},\n  "description": ${JSON.stringify(head.description)},\n  "cases": [\n${lines.join(',\n')}\n  ]\n}\n`;
}

export const ROUTER_250_PATH = fileURLToPath(new URL('../src/suites/data/router-250.json', import.meta.url));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = router250Json();
  if (process.argv.includes('--check')) {
    const same = readFileSync(ROUTER_250_PATH, 'utf8') === text;
    process.stdout.write(same ? 'router-250.json is up to date\n' : 'router-250.json differs from the generator output\n');
    process.exit(same ? 0 : 1);
  }
  writeFileSync(ROUTER_250_PATH, text);
  process.stdout.write(`wrote ${ROUTER_250_PATH} (${generateRouter250().length} cases)\n`);
}
