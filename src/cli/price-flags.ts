import type { Command } from 'commander';
import { localPrices, type LocalPrices } from '../core/usd-parts.js';
import { numberInRange } from './options.js';

/** The local price flags, as commander names them. */
export interface PriceFlags {
  electricityUsdPerKwh?: number;
  hardwareUsdPerHour?: number;
}

const usd = numberInRange(0, Number.MAX_VALUE);

/** `--electricity-usd-per-kwh`, `--hardware-usd-per-hour`: shared by `run`, `code` and `infer`. */
export function addPriceFlags(cmd: Command): Command {
  return cmd
    .option('--electricity-usd-per-kwh <usd>', "price the run's energy (the report's total_joules, measured or estimated) at this $/kWh: usd_energy (config prices.electricity_usd_per_kwh)", usd)
    .option('--hardware-usd-per-hour <usd>', "add amortised hardware at this $/h of the run's wall time: usd_hardware (config prices.hardware_usd_per_hour)", usd);
}

/** The local prices the flags give, or undefined when neither is given. */
export function pricesOfFlags(flags: PriceFlags): LocalPrices | undefined {
  return localPrices({ electricity_usd_per_kwh: flags.electricityUsdPerKwh, hardware_usd_per_hour: flags.hardwareUsdPerHour } as LocalPrices);
}
