import {
  codeGenerationAllowed,
  constantStoresCode,
  jsonStringBound,
  writeAscii,
  writeJsonNumber,
  writeJsonString,
  writeJsonStringRest,
  writeNull,
  writeText,
  viewOf,
} from '../core/json-bytes.js';
import { STAGE_IDS, type CaseResult } from '../core/types.js';

/**
 * A CaseResult's results-file line, encoded straight into a byte buffer: the same bytes as
 * `JSON.stringify(r)` (docs/benchmarks.md). The encoder is generated once from {@link CASE_FIELDS}, as
 * fast-json-stringify does; nested objects are JSON.stringify's ({@link nestedJson}); an `undefined` in a
 * required field is written `null`.
 */
export function encodeCaseLine(r: CaseResult, nested: NestedJson, buf: Uint8Array, at: number): number {
  return generated(r, nested, buf, at);
}

/** The parts of a CaseResult that are written as `JSON.stringify` gives them, already stringified. */
export interface NestedJson {
  /** Absent: `null`. */
  error?: string;
  by_domain?: string;
  joules_range?: string;
  itl_ms?: string;
  /** Only when the trace is not an array of objects (one is encoded entry by entry). */
  trace?: string;
  /** Only when `meta` is not flat (see {@link flatMeta}); a flat one is written key by key. */
  meta?: string;
  /** A flat `meta`'s keys in JSON.stringify's order, its values, and the most bytes its object takes. */
  metaKeys?: readonly string[];
  metaValues?: readonly (string | number | boolean | null)[];
  metaBound?: number;
  turns?: string;
  /** Only when the prompt is not a string (a conversation's messages). */
  prompt?: string;
}

const NONE: NestedJson = Object.freeze({});

/** Stringifies the nested parts of `r` once, for {@link caseLineBound} and {@link encodeCaseLine}. */
export function nestedJson(r: CaseResult): NestedJson {
  const plainTrace = r.trace === undefined || isTrace(r.trace);
  if (r.error == null && r.by_domain === undefined && r.joules_range === undefined && r.itl_ms === undefined && r.meta === undefined && r.turns === undefined && plainTrace && (r.prompt === undefined || typeof r.prompt === 'string')) return NONE;
  const out: NestedJson = {};
  if (r.error != null) out.error = JSON.stringify(r.error);
  if (r.by_domain !== undefined) out.by_domain = JSON.stringify(r.by_domain) ?? 'null';
  if (r.joules_range !== undefined) out.joules_range = JSON.stringify(r.joules_range) ?? 'null';
  if (r.itl_ms !== undefined) out.itl_ms = JSON.stringify(r.itl_ms) ?? 'null';
  if (!plainTrace) out.trace = JSON.stringify(r.trace) ?? 'null';
  if (r.meta !== undefined && !flatMeta(r.meta, out)) out.meta = JSON.stringify(r.meta) ?? 'null';
  if (r.turns !== undefined) out.turns = JSON.stringify(r.turns) ?? 'null';
  if (r.prompt !== undefined && typeof r.prompt !== 'string') out.prompt = JSON.stringify(r.prompt) ?? 'null';
  return out;
}

/**
 * A target's `meta` taken apart when it is flat (a plain object, no `toJSON`, every value a string,
 * number, boolean or null), to be written key by key ({@link writeFlatMeta}); anything else is left to
 * JSON.stringify. Each value is read once, here: a getter cannot change what was bounded.
 */
function flatMeta(meta: unknown, out: NestedJson): boolean {
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return false;
  const proto: unknown = Object.getPrototypeOf(meta);
  if ((proto !== Object.prototype && proto !== null) || typeof (meta as { toJSON?: unknown }).toJSON === 'function') return false;
  const keys = Object.keys(meta);
  const values: (string | number | boolean | null)[] = new Array(keys.length);
  const m = meta as Record<string, unknown>;
  let bound = 2;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const v = m[k];
    // Key, colon, comma; a number's shortest form is at most 25 characters (`-0.0000012345678901234567`).
    if (typeof v === 'string') bound += jsonStringBound(v.length);
    else if (v === null || typeof v === 'number' || typeof v === 'boolean') bound += 32;
    else return false;
    bound += jsonStringBound(k.length) + 2;
    values[i] = v;
  }
  out.metaKeys = keys;
  out.metaValues = values;
  out.metaBound = bound;
  return true;
}

/** A flat meta (see {@link flatMeta}) as `JSON.stringify` writes it. */
function writeFlatMeta(b: Uint8Array, o: number, keys: readonly string[], values: readonly (string | number | boolean | null)[]): number {
  b[o++] = 0x7b; // {
  for (let i = 0; i < keys.length; i++) {
    const v = values[i]!;
    if (i > 0) b[o++] = 0x2c; // ,
    o = writeJsonString(b, o, keys[i]!);
    b[o++] = 0x3a; // :
    if (typeof v === 'string') o = writeJsonString(b, o, v);
    else if (typeof v === 'number') o = writeJsonNumber(b, o, v);
    else if (v === null) o = writeNull(b, o);
    else o = writeAscii(b, o, v ? 'true' : 'false');
  }
  b[o] = 0x7d; // }
  return o + 1;
}

/** An array of objects: encoded entry by entry as `{stage, hit, energy_uj}` (anything else as JSON would). */
function isTrace(trace: unknown): trace is NonNullable<CaseResult['trace']> {
  if (!Array.isArray(trace)) return false;
  for (let i = 0; i < trace.length; i++) if (typeof trace[i] !== 'object' || trace[i] === null) return false;
  return true;
}

/** The most bytes {@link encodeCaseLine} writes for `r`: keys and numbers, strings, nested JSON. */
export function caseLineBound(r: CaseResult, nested: NestedJson): number {
  let n = 1024;
  n += stringBound(r.phase) + stringBound(r.case_id) + stringBound(r.dataset) + stringBound(r.response);
  n += stringBound(r.stage) + stringBound(r.expected) + stringBound(r.energy_source) + stringBound(r.prompt);
  n += 3 * ((nested.error?.length ?? 0) + (nested.by_domain?.length ?? 0) + (nested.joules_range?.length ?? 0) + (nested.itl_ms?.length ?? 0) + (nested.trace?.length ?? 0) + (nested.meta?.length ?? 0) + (nested.turns?.length ?? 0) + (nested.prompt?.length ?? 0));
  n += nested.metaBound ?? 0;
  const trace = nested.trace === undefined ? r.trace : undefined;
  if (trace !== undefined) for (let i = 0; i < trace.length; i++) n += 96 + stringBound(trace[i]!.stage);
  return n;
}

/** The line as a string (tests, and anyone without a buffer at hand). */
export function caseLine(r: CaseResult): string {
  const nested = nestedJson(r);
  const buf = Buffer.allocUnsafe(caseLineBound(r, nested));
  return buf.toString('utf8', 0, encodeCaseLine(r, nested, buf, 0));
}

function stringBound(s: unknown): number {
  return typeof s === 'string' ? jsonStringBound(s.length) : 8;
}

/**
 * How a field's value is written. `case`: the constant `"case"` (a results line's record kind);
 * `nested`: from {@link NestedJson}; `trace`: the cascade's trace; `meta`: a target's facts, flat or nested;
 * `prompt`: a string, or messages from {@link NestedJson}.
 */
type Kind = 'case' | 'string' | 'number' | 'boolean' | 'nested' | 'trace' | 'meta' | 'prompt';

/**
 * Every CaseResult key in order; optional ones are written only when present. A string field may
 * list the values it usually holds: those are written as constants, without scanning the string.
 */
const CASE_FIELDS = [
  ['record', 'case'],
  ['phase', 'string', ['scored', 'warmup']],
  ['pass', 'number'],
  ['index', 'number'],
  ['case_id', 'string'],
  ['dataset', 'string'],
  ['response', 'string'],
  ['stage', 'string', STAGE_IDS],
  ['expected', 'string'],
  ['passed', 'boolean'],
  ['score', 'number'],
  ['parsed', 'string'],
  ['weight', 'number'],
  ['joules', 'number'],
  ['energy_source', 'string', ['model', 'rapl', 'nvml', 'estimate', 'none']],
  ['below_floor', 'boolean'],
  ['energy_invalid', 'string'],
  ['latency_ms', 'number'],
  ['ttft_ms', 'number'],
  ['tpot_ms', 'number'],
  ['itl_ms', 'nested'],
  ['prompt_tokens', 'number'],
  ['completion_tokens', 'number'],
  ['cached_prompt_tokens', 'number'],
  ['reasoning_tokens', 'number'],
  ['cost_usd', 'number'],
  ['attempts', 'number'],
  ['retry_overhead_ms', 'number'],
  ['error', 'nested'],
  ['by_domain', 'nested'],
  ['joules_range', 'nested'],
  ['trace', 'trace'],
  ['meta', 'meta'],
  ['turns', 'nested'],
  ['prompt', 'prompt'],
] as const satisfies readonly (readonly [keyof CaseResult, Kind, (readonly string[])?])[];

// Fails to compile when CaseResult gains a key that CASE_FIELDS does not write.
type Unwritten = Exclude<keyof CaseResult, (typeof CASE_FIELDS)[number][0]>;
const everyKeyWritten: [Unwritten] extends [never] ? true : Unwritten = true;
void everyKeyWritten;

const OPTIONAL = new Set<string>(['parsed', 'cached_prompt_tokens', 'reasoning_tokens', 'energy_invalid', 'itl_ms', 'by_domain', 'joules_range', 'trace', 'meta', 'turns', 'prompt']);
/** Optional fields whose presence is read off the result itself (the others, off their pre-encoded JSON). */
const ON_RECORD = (kind: Kind): boolean => kind === 'trace' || kind === 'meta' || kind === 'prompt' || kind === 'string' || kind === 'number' || kind === 'boolean';

/*
 * Each value's code ends with `after`: the constant text that follows the value (the next field's key,
 * or the entry's closing brace). A value written as a constant (a common string, a boolean, null) is
 * stored together with it, so the key bytes join the longer eight-byte stores rather than ending in
 * single-byte ones.
 */

/** Code writing the string (or null) in `expr`, then `after`; `common` values are written as constants. */
function stringCode(expr: string, common: readonly string[] = [], after = ''): string {
  let code = `v=${expr};`;
  for (const value of common) code += `if(v===${JSON.stringify(value)}){${constantStoresCode(JSON.stringify(value) + after)}}else `;
  return `${code}if(typeof v==="string"){${inlineStringCode}${constantStoresCode(after)}}else{${constantStoresCode('null' + after)}}`;
}

/**
 * {@link writeJsonString} for the string in `v`, inlined in the generated code: printable ASCII is copied
 * a byte a character; {@link writeJsonStringRest} writes the rest from the first character to escape.
 */
const inlineStringCode =
  'b[o]=34;let p=o+1,i=0;const L=v.length;' +
  'for(;i<L;i++){const c=v.charCodeAt(i);if((c-32)>>>0>94||c===34||c===92)break;b[p++]=c;}' +
  'if(i===L){b[p]=34;o=p+1;}else o=E(b,p,v,i);';

/** Code writing the number (or null) in `expr`, then `after`; a single digit is stored in place. */
function numberCode(expr: string, after = ''): string {
  return `v=${expr};if(typeof v==="number"){if(v>=0&&v<10&&(v|0)===v){b[o++]=48+v;}else o=N(b,o,v);${constantStoresCode(after)}}else{${constantStoresCode('null' + after)}}`;
}

function booleanCode(expr: string, after = ''): string {
  return `v=${expr};if(v===true){${constantStoresCode('true' + after)}}else if(v===false){${constantStoresCode('false' + after)}}else{${constantStoresCode('null' + after)}}`;
}

/** The code that writes field `key` of a kind, then `after` (keys are plain identifiers, checked in generate). */
function valueCode(key: string, kind: Kind, common: readonly string[] | undefined, after: string): string {
  switch (kind) {
    case 'case':
      return constantStoresCode('"case"' + after);
    case 'string':
      return stringCode(`r.${key}`, common, after);
    case 'number':
      return numberCode(`r.${key}`, after);
    case 'boolean':
      return booleanCode(`r.${key}`, after);
    case 'nested':
      return `if(n.${key}===undefined){${constantStoresCode('null' + after)}}else{o=T(b,o,n.${key});${constantStoresCode(after)}}`;
    case 'trace':
      return `o=n.${key}===undefined?R(b,o,r.${key}):T(b,o,n.${key});${constantStoresCode(after)}`;
    case 'meta':
      return `o=n.${key}===undefined?M(b,o,n.metaKeys,n.metaValues):T(b,o,n.${key});${constantStoresCode(after)}`;
    case 'prompt':
      return `v=r.${key};if(typeof v==="string"){${inlineStringCode}}else o=T(b,o,n.${key});${constantStoresCode(after)}`;
  }
}

const helpers = { S: writeJsonString, E: writeJsonStringRest, N: writeJsonNumber, Z: writeNull, T: writeText, V: viewOf, M: writeFlatMeta };

/**
 * Compiles `body` into `function name(params)`; the parameters include the buffer `b` and offset `o`,
 * and the body sees the DataView `d`, a scratch `v` and the helpers (S string, E a string's rest from
 * its first character to escape, N number, Z null, T text, M flat meta).
 */
function compile<F>(name: string, params: string, body: string, extra: Record<string, unknown> = {}): F {
  const scope = { ...helpers, ...extra };
  const make = new Function(...Object.keys(scope), `"use strict";return function ${name}(${params}){const d=V(b);let v;${body}}`);
  return make(...Object.values(scope)) as F;
}

/** The cascade's trace, entries of the documented shape `{stage, hit, energy_uj}`, as generated code. */
function generateTraceWriter(): (b: Uint8Array, o: number, t: NonNullable<CaseResult['trace']>) => number {
  return compile(
    'writeTrace',
    'b,o,t',
    'b[o++]=91;for(let i=0;i<t.length;i++){const e=t[i];if(i>0)b[o++]=44;' +
      constantStoresCode('{"stage":') + stringCode('e.stage', STAGE_IDS, ',"hit":') + booleanCode('e.hit', ',"energy_uj":') + numberCode('e.energy_uj', '}') +
      '}b[o]=93;return o+1;',
  );
}

function generate(): (r: CaseResult, n: NestedJson, b: Uint8Array, at: number) => number {
  let body = '';
  // A required field's key is written with the value before it (see valueCode's `after`); an optional
  // field writes its own key, inside its presence check.
  let keyWritten = false;
  CASE_FIELDS.forEach((field, i) => {
    const [key, kind] = field;
    if (!/^[a-z_]+$/.test(key)) throw new Error(`case-line: unexpected key ${key}`);
    const keyText = `${i === 0 ? '{' : ','}"${key}":`;
    if (OPTIONAL.has(key)) {
      const write = constantStoresCode(keyText) + valueCode(key, kind, field[2], '');
      body += ON_RECORD(kind) ? `if(r.${key}!==undefined){${write}}` : `if(n.${key}!==undefined){${write}}`;
      keyWritten = false;
      return;
    }
    const next = CASE_FIELDS[i + 1];
    const after = next !== undefined && !OPTIONAL.has(next[0]) ? `,"${next[0]}":` : '';
    body += (keyWritten ? '' : constantStoresCode(keyText)) + valueCode(key, kind, field[2], after);
    keyWritten = after !== '';
  });
  body += 'b[o]=125;return o+1;';
  return compile('encodeCaseLine', 'r,n,b,o', body, { R: generateTraceWriter() });
}

/**
 * The same encoder without generated code, walking {@link CASE_FIELDS} for every line: used where
 * code generation from strings is off (`node --disallow-code-generation-from-strings`).
 */
function interpreted(r: CaseResult, n: NestedJson, b: Uint8Array, o: number): number {
  const fields = r as unknown as Record<string, unknown>;
  const nested = n as Record<string, string | undefined>;
  CASE_FIELDS.forEach(([key, kind], i) => {
    if (OPTIONAL.has(key) && (ON_RECORD(kind) ? fields[key] === undefined : nested[key] === undefined)) return;
    o = writeAscii(b, o, `${i === 0 ? '{' : ','}"${key}":`);
    const v = fields[key];
    if (kind === 'case') o = writeAscii(b, o, '"case"');
    else if (kind === 'string') o = typeof v === 'string' ? writeJsonString(b, o, v) : writeNull(b, o);
    else if (kind === 'number') o = typeof v === 'number' ? writeJsonNumber(b, o, v) : writeNull(b, o);
    else if (kind === 'boolean') o = typeof v === 'boolean' ? writeAscii(b, o, String(v)) : writeNull(b, o);
    else if (kind === 'prompt' && typeof v === 'string') o = writeJsonString(b, o, v);
    else if (nested[key] !== undefined) o = writeText(b, o, nested[key]);
    else if (kind === 'trace') o = interpretedTrace(b, o, r.trace!);
    else if (kind === 'meta') o = writeFlatMeta(b, o, n.metaKeys!, n.metaValues!);
    else o = writeNull(b, o);
  });
  b[o] = 0x7d;
  return o + 1;
}

function interpretedTrace(b: Uint8Array, o: number, trace: NonNullable<CaseResult['trace']>): number {
  b[o++] = 0x5b;
  trace.forEach((e, i) => {
    o = writeAscii(b, o, `${i > 0 ? ',' : ''}{"stage":`);
    o = typeof e.stage === 'string' ? writeJsonString(b, o, e.stage) : writeNull(b, o);
    o = writeAscii(b, o, ',"hit":');
    o = typeof e.hit === 'boolean' ? writeAscii(b, o, String(e.hit)) : writeNull(b, o);
    o = writeAscii(b, o, ',"energy_uj":');
    o = typeof e.energy_uj === 'number' ? writeJsonNumber(b, o, e.energy_uj) : writeNull(b, o);
    b[o++] = 0x7d;
  });
  b[o] = 0x5d;
  return o + 1;
}

const generated = codeGenerationAllowed() ? generate() : interpreted;
