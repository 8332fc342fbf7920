import type { CaseResult } from '../core/types.js';
import { constant, type Interned, type Lit, NUM, num, skipString, type TraceCache, W_FALS, W_NULL, W_TRUE } from './scan-bytes.js';

/** What a scan keeps from line to line: the strings and traces seen. */
export interface ScanState {
  datasets: Interned;
  stages: Interned;
  sources: Interned;
  traces: TraceCache;
}

/**
 * Reads the case line starting at `b[p]` into `r` (`v` views `b` from its start), reading no further
 * than `e`: where the line ends (its newline, or `e`), or -1 when it does not read the line whole.
 */
export type ScanFn = (s: ScanState, b: Uint8Array, v: DataView, p: number, e: number, r: CaseResult) => number;

/**
 * How each value after the head is read, in the encoder's order (src/runner/case-line.ts). `int`: a
 * whole number (pass, index); `skip`: a string checked, not read (`skipOrNull`: or null); `interned`:
 * a string read through the state's table named (`internedOrNull`: or null); `bool` and `num`: or null;
 * `boolReq` and `numReq`: never null (a null declines the line, which the results parser then refuses).
 * A key ending in `"` takes a string that is never null: its opening quote is part of the key.
 */
const PLAN: readonly (readonly [key: keyof CaseResult, kind: 'int' | 'skip' | 'skipOrNull' | 'interned' | 'internedOrNull' | 'bool' | 'boolReq' | 'num' | 'numReq', table?: keyof ScanState])[] = [
  ['index', 'int'],
  ['case_id', 'skip'],
  ['dataset', 'interned', 'datasets'],
  ['response', 'skipOrNull'],
  ['stage', 'internedOrNull', 'stages'],
  ['expected', 'skipOrNull'],
  ['passed', 'bool'],
  ['score', 'num'],
  ['weight', 'numReq'],
  ['joules', 'num'],
  ['energy_source', 'interned', 'sources'],
  ['below_floor', 'boolReq'],
  ['latency_ms', 'numReq'],
  ['ttft_ms', 'num'],
  ['tpot_ms', 'num'],
  ['prompt_tokens', 'num'],
  ['completion_tokens', 'num'],
  ['cost_usd', 'num'],
  ['attempts', 'numReq'],
  ['retry_overhead_ms', 'numReq'],
];

/** Scratch for checking that a double's literal reads back as the same bits. */
const EIGHT = new DataView(new ArrayBuffer(8));

/** A condition true when the bytes at `p` are exactly `t` (see {@link Lit}), as code. */
function litTest(t: Lit): string {
  if (t.n < 8) return `(p+${t.n}<=e&&v.getInt32(p,true)===${t.w[0]}&&v.getInt32(p+${t.n - 4},true)===${t.w[1]})`;
  const parts = t.at.map((at, i) => {
    const value = t.f[i]!;
    const literal = String(value);
    EIGHT.setFloat64(0, Number(literal), true);
    if (EIGHT.getFloat64(0, true) !== value || !/^[-0-9.e+]+$/.test(literal)) throw new Error(`case-scan: ${t.text} does not round-trip as doubles`);
    return `v.getFloat64(p+${at},true)===${literal}`;
  });
  return `(p+${t.n}<=e&&${parts.join('&&')})`;
}

/** Code that moves `p` past `t` or returns false. */
function litCode(t: Lit): string {
  return `if(!${litTest(t)})return -1;p+=${t.n};`;
}

/** Code reading a value of `kind` at `p` into `r.key`, moving `p` past it (or returning false). */
function valueCode(key: string, kind: (typeof PLAN)[number][1], table?: string): string {
  switch (kind) {
    case 'int':
      return `c=p<e?b[p]:-1;if(c>=48&&c<=57&&p+1<e&&b[p+1]===44){x=c-48;p++;}else{p=N(b,p,e);if(p<0)return -1;x=F[0];if(!Number.isInteger(x))return -1;}r.${key}=x;`;
    case 'skip':
      return 'p=K(b,p,e);if(p<0)return -1;';
    case 'skipOrNull':
      return `if(p<e&&b[p]===34)p=K(b,p+1,e);else if(p+4<=e&&v.getInt32(p,true)===${W_NULL})p+=4;else return -1;if(p<0)return -1;`;
    case 'interned':
      return `p=s.${table}.read(b,p,e);if(p<0)return -1;r.${key}=s.${table}.value;`;
    case 'internedOrNull':
      return `if(p<e&&b[p]===34){p=s.${table}.read(b,p+1,e);if(p<0)return -1;r.${key}=s.${table}.value;}else if(p+4<=e&&v.getInt32(p,true)===${W_NULL}){p+=4;r.${key}=null;}else return -1;`;
    case 'bool':
      return (
        `if(p+4>e)return -1;x=v.getInt32(p,true);if(x===${W_TRUE}){r.${key}=true;p+=4;}` +
        `else if(x===${W_FALS}&&p+5<=e&&b[p+4]===101){r.${key}=false;p+=5;}else if(x===${W_NULL}){r.${key}=null;p+=4;}else return -1;`
      );
    case 'boolReq':
      return (
        `if(p+4>e)return -1;x=v.getInt32(p,true);if(x===${W_TRUE}){r.${key}=true;p+=4;}` +
        `else if(x===${W_FALS}&&p+5<=e&&b[p+4]===101){r.${key}=false;p+=5;}else return -1;`
      );
    case 'numReq':
      return `c=p<e?b[p]:-1;if(c>=48&&c<=57&&p+1<e&&b[p+1]===44){r.${key}=c-48;p++;}else{p=N(b,p,e);if(p<0)return -1;x=F[0];if(x!==x)return -1;r.${key}=x;}`;
    case 'num':
      // One digit before the next key's comma, and null, in place; anything else through num.
      return (
        `c=p<e?b[p]:-1;if(c>=48&&c<=57&&p+1<e&&b[p+1]===44){r.${key}=c-48;p++;}` +
        `else if(p+4<=e&&v.getInt32(p,true)===${W_NULL}){r.${key}=null;p+=4;}` +
        `else{p=N(b,p,e);if(p<0)return -1;x=F[0];r.${key}=x===x?x:null;}`
      );
  }
}

/**
 * The scan as straight-line code, generated once: the same reading as `interpretedScan`
 * (src/report/case-scan.ts), with every key's comparison and the common values (one digit, null,
 * booleans) written out in place rather than called. `end` reads the error and the trace.
 */
export function generateScan(end: ScanFn): ScanFn {
  const scored = constant('{"record":"case","phase":"scored","pass":');
  const warmup = constant('{"record":"case","phase":"warmup","pass":');
  let body = `if(${litTest(scored)})r.phase="scored";else if(${litTest(warmup)})r.phase="warmup";else return -1;p+=${scored.n};`;
  body += valueCode('pass', 'int');
  for (const [key, kind, table] of PLAN) {
    if (!/^[a-z_]+$/.test(key)) throw new Error(`case-scan: unexpected key ${key}`);
    const quoted = kind === 'skip' || kind === 'interned';
    body += litCode(constant(`,"${key}":${quoted ? '"' : ''}`)) + valueCode(key, kind, table);
  }
  body += 'return E(s,b,v,p,e,r);';
  const make = new Function('N', 'F', 'K', 'E', `"use strict";return function scanCaseLine(s,b,v,p,e,r){let c=0,x=0;${body}}`);
  return make(num, NUM, skipString, end) as ScanFn;
}
