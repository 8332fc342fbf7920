import { basename, dirname, join } from 'node:path';
import { stripColors } from '../report/colors.js';
import { checkOutputPath, formatOf, writeOutputFile, type OutputFormat, type StreamedOutput } from './output-file.js';

/** How a command renders its result in each format it can write; the extension of `-o` picks one. */
export type Renderings = Partial<Record<OutputFormat, () => string | StreamedOutput | Promise<string | StreamedOutput>>>;

/** Every format, in the order help lists them (what `run`, `code` and `report` write). */
export const ALL_FORMATS: readonly OutputFormat[] = ['json', 'md', 'html', 'csv', 'jsonl', 'txt'];

/** The formats a command offers, in the order its help lists them. */
export function formatsOf(r: Renderings): OutputFormat[] {
  return ALL_FORMATS.filter((f) => r[f] !== undefined);
}

/** Checks `-o PATH` before any work (a format the command writes, a writable kind of path); returns the format. */
export function planOutput(path: string, offered: readonly OutputFormat[]): { format: OutputFormat; regular: boolean } {
  return { format: formatOf(path, offered), regular: checkOutputPath(path, '--out').regular };
}

/** Renders in the format `path`'s extension names and writes it; the format written is returned. */
export async function writeByExtension(path: string, r: Renderings): Promise<OutputFormat> {
  const format = formatOf(path, formatsOf(r));
  // A text table is rendered for a terminal: its file gets no colour codes.
  const rendered = await r[format]!();
  const text = format === 'txt' && typeof rendered === 'string' ? stripColors(rendered) : rendered;
  writeOutputFile(path, text);
  return format;
}

/** The known output extensions, stripped when side files are named after the output. */
const OUTPUT_EXT = /\.(json|md|markdown|html?|csv|jsonl|txt)$/i;

/** Where side files go: beside a regular output file, else (a device, a pipe, no `-o`) the default run folder. */
export function sideFileBase(out: string | undefined, regular: boolean, defaultName: string, started: Date): string {
  if (out !== undefined && regular) return join(dirname(out), basename(out).replace(OUTPUT_EXT, ''));
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  return join('.joulebench', 'runs', `${defaultName.replace(/[^A-Za-z0-9._-]+/g, '_')}-${stamp}`);
}
