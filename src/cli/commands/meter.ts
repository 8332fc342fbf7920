import { Command } from 'commander';
import { pc } from '../../report/colors.js';
import { prettyJson } from '../../core/canonical.js';
import { JoulebenchError } from '../../core/errors.js';
import { createMeter } from '../../meters/registry.js';
import { fmtJoules, table } from '../../report/format.js';
import { measureCommand, type CommandMeasurement } from '../../runner/measure-command.js';
import { ExitWith, type CliIO } from '../io.js';
import { addMeterFlags, idleMsFrom, meterOptionsFrom, type MeterFlags } from '../meter-flags.js';

interface MeterCommandFlags extends MeterFlags {
  json?: boolean;
}

/** `joulebench meter [--meter …] [--json] -- CMD ARGS…`: perf stat for energy. */
export function meterCommand(io: CliIO): Command {
  const cmd = new Command('meter')
    .description('run any command under an energy meter and print wall time, CPU time, gross and net joules per domain (exit code passes through)')
    .argument('<command...>', 'the command and its arguments (put them after --)')
    .option('--json', "print one JSON object on stdout (the command's own stdout then goes to stderr)");
  return addMeterFlags(cmd).action(async (command: string[], flags: MeterCommandFlags) => {
    const code = await meterAction(command, flags, io);
    throw new ExitWith(code);
  });
}

/** Runs the command under the meter, prints the measurement, and returns the command's exit code. */
async function meterAction(command: string[], flags: MeterCommandFlags, io: CliIO): Promise<number> {
  if (flags.meter === 'model') {
    throw new JoulebenchError('E_USAGE', '--meter model: a bare command reports no energy of its own; use auto, rapl, nvml, composite or estimate');
  }
  // The estimate counts the command's CPU (the waited-for children) only, never joulebench's own.
  const opts = meterOptionsFrom(flags, process.env, { auto_fallback: 'estimate', estimate_cpu_scope: 'children' });
  const meter = await createMeter(flags.meter ?? 'auto', opts);
  try {
    const probe = await meter.probe();
    if (!probe.available) {
      throw new JoulebenchError('E_METER', `meter ${meter.id} cannot read here: ${probe.reason}${probe.fix ? ` (fix: ${probe.fix})` : ''}`);
    }
    const m = await measureCommand(command, {
      meter,
      idle_ms: idleMsFrom(flags),
      // With --json, stdout carries exactly one JSON object: the command's stdout goes to stderr.
      stdio: flags.json ? ['inherit', process.stderr, 'inherit'] : 'inherit',
    });
    if (m.spawn_error) io.err(`joulebench: cannot run ${JSON.stringify(command[0])}: ${m.spawn_error}\n`);
    if (flags.json) io.out(prettyJson({ ...m, meter_detail: meter.describe() }));
    else {
      const label = (meter.describe().cpu_coefficient as { label?: string } | undefined)?.label;
      io.err(renderMeasurement(m) + (label ? `${label}\n` : ''));
    }
    return m.exit_code;
  } finally {
    await meter.close?.();
  }
}

/** The measurement as people read it (on stderr, like `time` and `perf stat`). */
function renderMeasurement(m: CommandMeasurement): string {
  const lines: string[] = [];
  lines.push(pc.bold(`joulebench meter · ${m.command.join(' ')}`) + pc.dim(` · meter ${m.meter}`));
  const head: string[][] = [
    ['exit code', String(m.exit_code) + (m.signal ? pc.dim(` (${m.signal})`) : '')],
    ['wall', `${m.wall_ms.toFixed(1)} ms`],
    ['CPU (command + waited children)', m.cpu_ms === null ? 'n/a' : `${m.cpu_ms.toFixed(0)} ms` + pc.dim(' (10 ms ticks)')],
  ];
  lines.push(table(head));
  lines.push('');
  const rows: string[][] = [[pc.dim('domain'), pc.dim('gross'), pc.dim('net'), pc.dim('idle'), pc.dim('source')]];
  for (const [d, v] of Object.entries(m.by_domain)) {
    rows.push([d, fmtJoules(v.gross_joules), fmtJoules(v.net_joules), v.idle_watts === null ? '—' : `${v.idle_watts.toFixed(2)} W`, v.source]);
  }
  rows.push([pc.bold('total'), fmtJoules(m.gross_joules), fmtJoules(m.net_joules), m.idle.watts === null ? '—' : `${m.idle.watts.toFixed(2)} W`, m.source]);
  lines.push(table(rows));
  const notes: string[] = [];
  if (m.idle.status !== 'measured' && m.idle.reason) notes.push(m.idle.reason);
  if (m.below_floor) notes.push(pc.yellow(`below the meter's floor (${m.floor_ms} ms): the energy figure is noise-dominated`));
  for (const w of m.warnings) notes.push(pc.yellow(w));
  if (notes.length > 0) lines.push('', ...notes.map((n) => `  ${n}`));
  return lines.join('\n') + '\n';
}
