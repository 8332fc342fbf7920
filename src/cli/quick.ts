import { VERSION } from '../version.js';
import { COMMANDS, PROGRAM_DESCRIPTION } from './program.js';

/**
 * `--version` and `--help` (also `-V`, `-h`, `help`) answered from the command table before commander
 * loads, in commander's exact layout (test/cli/help.test.ts); anything else returns null.
 */
export function quickOutput(argv: readonly string[], width: number): string | null {
  if (argv.length !== 1) return null;
  const a = argv[0];
  if (a === '--version' || a === '-V') return `${VERSION}\n`;
  if (a === '--help' || a === '-h' || a === 'help') return topHelp(width);
  return null;
}

/** commander's help width: the terminal's columns on a TTY, else 80. */
export function helpWidthOf(stream: { isTTY?: boolean; columns?: number }): number {
  return stream.isTTY && stream.columns ? stream.columns : 80;
}

function topHelp(width: number): string {
  const options: [string, string][] = [
    ['-V, --version', 'output the version number'],
    ['-h, --help', 'display help for command'],
  ];
  const commands: [string, string][] = [...Object.values(COMMANDS).map((c): [string, string] => [c.term, c.summary]), ['help [command]', 'display help for command']];
  const termWidth = Math.max(...[...options, ...commands].map(([t]) => t.length));
  const item = ([term, description]: [string, string]): string => {
    const remaining = width - termWidth - 4;
    const body = remaining < MIN_WIDTH_TO_WRAP ? description : wrap(description, remaining).replace(/\n/g, `\n${' '.repeat(termWidth + 2)}`);
    return `  ${term.padEnd(termWidth)}  ${body.replace(/\n/g, '\n  ')}`;
  };
  return [
    'Usage: joulebench [options] [command]',
    '',
    wrap(PROGRAM_DESCRIPTION, width),
    '',
    'Options:',
    ...options.map(item),
    '',
    'Commands:',
    ...commands.map(item),
    '',
  ].join('\n');
}

const MIN_WIDTH_TO_WRAP = 40;

/** Greedy wrap at whitespace, as commander's Help.boxWrap (plain text, one paragraph). */
function wrap(text: string, width: number): string {
  if (width < MIN_WIDTH_TO_WRAP) return text;
  const chunks = text.match(/\s*\S+/g);
  if (chunks === null) return '';
  const lines: string[] = [];
  let line = chunks[0]!;
  for (const chunk of chunks.slice(1)) {
    if (line.length + chunk.length <= width) line += chunk;
    else {
      lines.push(line);
      line = chunk.trimStart();
    }
  }
  lines.push(line);
  return lines.join('\n');
}
