import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** One malformed input: the CLI arguments that read it and the path its error must name. */
export interface FuzzCase {
  /** A short label of the class and variant, for failure messages. */
  label: string;
  args: string[];
  /** The path the one error line must contain. */
  names: string;
}

/** mulberry32: a small seeded generator, so a failing case can be replayed from its seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

/** Strings with the characters that break terminals and line-oriented logs. */
function nasty(r: Rand): string {
  const bits = ['\n', '\r', '\u001b[2J', '\u001b]0;title\u0007', '\u0000', '\u009b31m', '\u2028', '\t', '"', "'", '\\', '{', '%', 'é', '😀', '\u202e'];
  let s = '';
  for (let i = int(r, 1, 6); i > 0; i--) s += pick(r, bits) + pick(r, ['x', 'id', '', 'ab']);
  return s;
}

function huge(r: Rand): string {
  return pick(r, ['a', 'é', '\n', 'x\u001b']).repeat(int(r, 50_000, 400_000));
}

function nested(depth: number, open: string, close: string, inner: string): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

function junk(r: Rand, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(r() * 256);
  return b;
}

const okCase = () => ({ id: 'a', prompt: 'p', expected: 'x' });

/** A malformed suite value (before encoding): wrong types, missing keys, bad values. */
function badSuiteValue(r: Rand): { label: string; value: unknown; caseLevel?: boolean } {
  const c = { ...okCase() } as Record<string, unknown>;
  const variants: (() => { label: string; value: unknown; caseLevel?: boolean })[] = [
    () => ({ label: 'cases not a list', value: { name: 's', cases: pick(r, [1, 'x', null, true, { a: 1 }]) } }),
    () => ({ label: 'no cases', value: { name: 's' } }),
    () => {
      const k = pick(r, ['id', 'prompt', 'expected']);
      delete c[k];
      return { caseLevel: true, label: `case without ${k}`, value: { cases: [c] } };
    },
    () => {
      c[pick(r, ['id', 'prompt', 'weight', 'tags', 'choices', 'turns'])] = pick(r, [[1], { a: 1 }, -1, 'x', 1e309, null, true]);
      return { caseLevel: true, label: 'case key of the wrong type', value: { cases: [c, okCase()] } };
    },
    () => ({ label: 'scorer unknown', value: { scorer: nasty(r), cases: [okCase()] } }),
    () => ({ caseLevel: true, label: 'unknown key with controls', value: { cases: [{ ...okCase(), [nasty(r)]: 1 }] } }),
    () => ({ caseLevel: true, label: 'duplicate id with controls', value: { cases: [{ ...okCase(), id: nasty(r) }, { ...okCase(), id: 'b' }, { ...okCase(), id: 'b' }] } }),
    () => {
      const id = nasty(r);
      return { caseLevel: true, label: 'duplicate nasty id', value: { cases: [{ ...okCase(), id }, { ...okCase(), id }] } };
    },
    () => ({ label: 'huge unknown key value', value: { cases: [okCase()], [huge(r).slice(0, 5000)]: huge(r) } }),
    () => {
      const id = huge(r);
      return { caseLevel: true, label: 'huge duplicate id', value: { cases: [{ ...okCase(), id }, { ...okCase(), id }] } };
    },
    () => ({ label: 'huge bad regex', value: { scorer: 'regex', cases: [{ ...okCase(), id: nasty(r), expected: `(${huge(r)}` }] } }),
    () => ({ caseLevel: true, label: 'deeply nested prompt', value: { cases: [{ ...okCase(), prompt: JSON.parse(nested(int(r, 100, 3000), '[', ']', '1')) }] } }),
    () => ({ caseLevel: true, label: 'empty id', value: { cases: [{ ...okCase(), id: '' }] } }),
    () => ({ label: 'top level scalar', value: pick(r, [1, 'x', true, 0]) }),
    () => ({ caseLevel: true, label: 'weight zero', value: { cases: [{ ...okCase(), weight: 0 }] } }),
  ];
  return pick(r, variants)();
}

/** A malformed run config (YAML text). */
function badConfigText(r: Rand): { label: string; text: string } {
  const variants: (() => { label: string; text: string })[] = [
    () => ({ label: 'unknown top key', text: `${JSON.stringify(nasty(r))}: 1\n` }),
    () => ({ label: 'target not a mapping', text: `target: ${pick(r, ['1', '[1]', '"x"', 'true'])}\n` }),
    () => ({ label: 'kind unknown', text: `target:\n  kind: ${JSON.stringify(nasty(r))}\n` }),
    () => ({ label: 'endpoint with CR/LF', text: `target:\n  kind: openai\n  model: m\n  endpoint: ${JSON.stringify(`http://127.0.0.1:9/v1${pick(r, ['\r\n', '\n', '\r', '\t', '\u0000'])}x`)}\n` }),
    () => ({ label: 'endpoint not a URL', text: `target:\n  endpoint: ${JSON.stringify(nasty(r))}\n` }),
    () => ({ label: 'endpoint huge', text: `target:\n  endpoint: ${JSON.stringify(`http://${huge(r).slice(0, 100_000)} ${nasty(r)}`)}\n` }),
    () => ({ label: 'request_s out of range', text: `timeouts:\n  request_s: ${pick(r, ['1e10', '2147484', '-1', '0', '.nan', '.inf', '"5"', '0.0000001'])}\n` }),
    () => ({ label: 'retry wrong', text: `params:\n  retry:\n    max_attempts: ${pick(r, ['0', '1.5', '"x"', '[]'])}\n` }),
    () => ({ label: 'backoff huge', text: `params:\n  retry:\n    max_attempts: 2\n    backoff_max_s: ${pick(r, ['1e12', '3e6', '.inf', '-0.5'])}\n` }),
    () => ({ label: 'price wrong', text: `prices:\n  input_usd_per_mtok: ${pick(r, ['1e300', '-1', '"x"', '.nan'])}\n  output_usd_per_mtok: 1\n` }),
    () => ({ label: 'credentials literal', text: `target:\n  credentials_ref: ${JSON.stringify(`sk-${nasty(r)}`)}\n` }),
    () => ({ label: 'subjects wrong', text: `params:\n  subjects: ${pick(r, ['1', '"x"', '[1, 2]', '{a: 1}'])}\n` }),
    () => ({ label: 'deep nesting', text: `target: ${nested(int(r, 50, 2000), '[', ']', '1')}\n` }),
    () => ({ label: 'deep block nesting', text: `params:\n${Array.from({ length: int(r, 20, 300) }, (_, i) => `${'  '.repeat(i + 1)}k${i}:`).join('\n')} 1\n` }),
    () => ({ label: 'invalid YAML', text: pick(r, ['target: [1, 2\n', 'a: b: c\n', 'target:\n\t- x\n', '{{{\n', 'x: "unterminated\n', '- a\nb: 1\n']) }),
    () => ({ label: 'duplicate keys', text: 'target:\n  model: a\n  model: b\n' }),
    () => ({ label: 'alias bomb', text: `a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n` }),
    () => ({ label: 'unknown tag and bad key', text: `target: !custom\n  kind: ${JSON.stringify(nasty(r))}\n` }),
    () => ({ label: 'top-level list', text: '- target\n- params\n' }),
    () => ({ label: 'control chars in key', text: `target:\n  ${JSON.stringify(nasty(r))}: 1\n` }),
  ];
  return pick(r, variants)();
}

/**
 * Writes `count` malformed suites and configs under `dir` from `seed` and returns how to run each.
 * Classes: wrong types, missing keys, control characters, deep nesting, huge strings, binary junk,
 * byte-order marks, special files (FIFO, device, socket path, directory, a link to /dev/zero).
 */
export function writeCorpus(dir: string, seed: number, count: number, missingSuite: string): FuzzCase[] {
  const r = rng(seed);
  const out: FuzzCase[] = [];
  mkdirSync(dir, { recursive: true });
  const suiteRun = (p: string) => ['run', '-q', '--no-history', '-o', join(dir, 'report.json'), '--results', join(dir, 'results.jsonl'), '--suite', p];
  // A valid config would go on to the suite: point it at one that does not exist, so only the config can be named.
  const configRun = (p: string) => ['run', '-q', '--no-history', '--suite', missingSuite, '--config', p];
  for (let i = 0; i < count; i++) {
    const isConfig = r() < 0.4;
    const klass = r();
    const base = join(dir, `c${i}`);
    let label: string;
    let path: string;
    if (klass < 0.06) {
      // Special files.
      const kind = pick(r, ['fifo', 'dir', 'zero-link', 'urandom-link']);
      path = `${base}${isConfig ? '.yaml' : pick(r, ['.json', '.jsonl', '.yaml'])}`;
      if (kind === 'fifo') execFileSync('mkfifo', [path]);
      else if (kind === 'dir') mkdirSync(path);
      else symlinkSync(kind === 'zero-link' ? '/dev/zero' : '/dev/urandom', path);
      label = `special file: ${kind}`;
    } else if (klass < 0.16) {
      // Binary junk: random bytes, mostly not UTF-8.
      path = `${base}${isConfig ? '.yaml' : pick(r, ['.json', '.jsonl', '.yaml', '.yml'])}`;
      const b = junk(r, int(r, 1, 4096));
      b[0] = 0xff; // never valid UTF-8, so never accidentally a valid input
      writeFileSync(path, b);
      label = 'binary junk';
    } else if (isConfig) {
      const c = badConfigText(r);
      const bom = r() < 0.15;
      path = `${base}.yaml`;
      writeFileSync(path, `${bom ? '\ufeff' : ''}${c.text}`);
      label = `config: ${c.label}${bom ? ' (BOM)' : ''}`;
    } else {
      const s = badSuiteValue(r);
      // JSONL carries only the cases: a top-level fault would vanish, so those go to the other formats.
      const ext = pick(r, s.caseLevel ? ['.json', '.json', '.jsonl', '.jsonl', '.yaml', '.yml', '.txt'] : ['.json', '.json', '.yaml', '.yml', '.txt']);
      const bom = r() < 0.15 ? pick(r, ['\ufeff', '\ufeff\ufeff']) : '';
      path = `${base}${ext}`;
      let text: string;
      if (ext === '.jsonl') {
        text = ((s.value as { cases: unknown[] }).cases ?? []).map((x) => JSON.stringify(x)).join('\n');
      } else if (ext === '.yaml' || ext === '.yml') text = JSON.stringify(s.value); // JSON is YAML
      else text = JSON.stringify(s.value);
      if (r() < 0.1) text = text.slice(0, Math.max(1, Math.floor(text.length * r()))); // truncated
      writeFileSync(path, `${bom}${text}`);
      label = `suite ${ext}: ${s.label}${bom ? ` (${bom.length} BOM)` : ''}`;
    }
    out.push({ label: `#${i} ${label}`, args: isConfig ? configRun(path) : suiteRun(path), names: path });
  }
  return out;
}
