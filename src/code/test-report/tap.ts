import { Parser, type Result } from 'tap-parser';
import type { ParsedReport, ReportedTest } from './types.js';

/** A TAP 13/14 stream's test points named by path (`parent > child`); a bail-out or a count off its plan is no report. */
export function parseTap(text: string): ParsedReport {
  if (text.trim() === '') return { ok: false, error: 'the TAP report is empty' };
  const tests: ReportedTest[] = [];
  type Final = { bailout: boolean | string; failures: { tapError?: string | null }[] };
  const ended: Final[] = [];
  const listen = (p: Parser, path: string[]) => {
    p.on('assert', (a: Result) => {
      const id = [...path, a.name || `#${a.id}`].join(' > ');
      tests.push({ id, outcome: a.todo ? 'todo' : a.skip ? 'skipped' : a.ok ? 'passed' : 'failed' });
    });
    p.on('child', (c: Parser) => listen(c, [...path, c.name || 'subtest']));
  };
  const parser = new Parser((r) => {
    ended.push(r as unknown as Final);
  });
  listen(parser, []);
  parser.end(text);
  const f = ended[0];
  if (!f) return { ok: false, error: 'the TAP report did not end' };
  if (f.bailout) return { ok: false, error: `the TAP report bailed out${typeof f.bailout === 'string' && f.bailout ? ` (${f.bailout})` : ''}` };
  const broken = f.failures.map((x) => x.tapError).filter((e): e is string => typeof e === 'string' && e !== '');
  if (broken.length > 0) return { ok: false, error: `the TAP report is not whole (${broken.join('; ')})` };
  return { ok: true, tests };
}
