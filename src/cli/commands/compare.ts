import { Command } from 'commander';
import { prettyJson } from '../../core/canonical.js';
import { compare } from '../../core/compare.js';
import { readReportFile } from '../../report/load.js';
import { renderComparisonTable } from '../../report/table.js';
import { writeFileEnsured, type CliIO } from '../io.js';

export function compareCommand(io: CliIO): Command {
  return new Command('compare')
    .description('compare two reports: J/correct and p95 latency as % change, accuracy as a point difference')
    .requiredOption('-b, --baseline <file>', 'the baseline report JSON')
    .requiredOption('-c, --candidate <file>', 'the candidate report JSON')
    .option('-o, --out <file>', 'write the comparison JSON here (default: stdout, with the table on stderr)')
    .option('-q, --quiet', 'no table')
    .action((flags: { baseline: string; candidate: string; out?: string; quiet?: boolean }) => {
      const base = readReportFile(flags.baseline);
      const cand = readReportFile(flags.candidate);
      const result = compare(base, cand);
      const warn =
        base.suite?.digest && cand.suite?.digest && base.suite.digest !== cand.suite.digest
          ? `warning: the reports ran different cases (suite digests ${base.suite.digest.slice(0, 19)}… and ${cand.suite.digest.slice(0, 19)}…): not comparable\n`
          : '';
      if (flags.out) {
        writeFileEnsured(flags.out, prettyJson(result));
        if (!flags.quiet) io.out(renderComparisonTable(result));
      } else {
        io.out(prettyJson(result));
        if (!flags.quiet) io.err(renderComparisonTable(result));
      }
      if (warn) io.err(warn);
    });
}
