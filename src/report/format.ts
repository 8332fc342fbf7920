import { stripColors } from './colors.js';
import type { Interval } from '../stats/interval.js';

/** Small number formatters for people; JSON never goes through these. */

export function fmtJoules(j: number | null): string {
  if (j === null) return 'n/a';
  const a = Math.abs(j);
  if (a === 0) return '0 J';
  if (a >= 1000) return `${(j / 1000).toFixed(2)} kJ`;
  if (a >= 1) return `${j.toFixed(2)} J`;
  if (a >= 1e-3) return `${(j * 1e3).toFixed(2)} mJ`;
  return `${(j * 1e6).toFixed(1)} µJ`;
}

export const fmtPct = (p: number | null, digits = 1): string => (p === null ? 'n/a' : `${p.toFixed(digits)} %`);

/** Cases no scorer decided: `unscored_count`, or `case_count − scored_count` for older reports; null when neither. */
export function unscoredOf(r: { case_count?: number; scored_count?: number; unscored_count?: number }): number | null {
  if (typeof r.unscored_count === 'number') return r.unscored_count;
  return typeof r.case_count === 'number' && typeof r.scored_count === 'number' ? r.case_count - r.scored_count : null;
}

export const fmtMs = (ms: number | null): string => (ms === null ? 'n/a' : `${ms} ms`);

export function fmtUsd(usd: number | null): string {
  if (usd === null) return 'n/a';
  return usd >= 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toPrecision(3)}`;
}

/** A p-value: two significant digits, exponent form below 1e-4. */
export const fmtP = (p: number | null): string =>
  p === null ? 'n/a' : p < 1e-4 ? p.toExponential(1) : p.toPrecision(2);

/** `[low, high]` in `fmt`, `degenerate (all V)` for one over identical values, or `n/a`. */
export const fmtRange = (i: Interval | null | undefined, fmt: (v: number) => string): string =>
  !i ? 'n/a' : i.method === 'degenerate' ? `degenerate (all ${fmt(i.low)})` : `[${fmt(i.low)}, ${fmt(i.high)}]`;

export const fmtSigned = (v: number | null, unit: string, digits = 2): string =>
  v === null ? 'n/a' : `${v > 0 ? '+' : ''}${v.toFixed(digits)}${unit}`;

/** Aligns columns: by default the first left and the rest right; `align` overrides per column. */
export function table(rows: string[][], align: readonly ('l' | 'r')[] = [], indent = '  '): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, stripColors(cell).length)));
  const padded = (cell: string, i: number): string => {
    const pad = ' '.repeat((widths[i] ?? 0) - stripColors(cell).length);
    return (align[i] ?? (i === 0 ? 'l' : 'r')) === 'l' ? cell + pad : pad + cell;
  };
  return rows.map((r) => indent + r.map(padded).join('  ').trimEnd()).join('\n');
}

/** A Markdown table row, each cell escaped (pipes and newlines would break the row). */
function mdRow(cells: readonly string[]): string {
  return `| ${cells.map((s) => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ')).join(' | ')} |`;
}

/** A Markdown table: by default the first column left-aligned and the rest right; `align` overrides per column. */
export function mdTable(head: string[], rows: string[][], align?: ('l' | 'r')[]): string {
  const sep = head.map((_, i) => ((align?.[i] ?? (i === 0 ? 'l' : 'r')) === 'r' ? '---:' : '---'));
  return [mdRow(head), `| ${sep.join(' | ')} |`, ...rows.map(mdRow)].join('\n');
}

/** HTML-escapes text for element content and attribute values. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
