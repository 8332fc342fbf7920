import { JoulebenchError } from '../core/errors.js';
import type { GridIntensity } from '../core/co2e.js';

/**
 * Average carbon intensity of electricity by country (gCO₂e/kWh, life-cycle GWP), ISO 3166-1
 * alpha-3 codes plus `WOR` for the world average. Source: ADEME Base Empreinte®, as averaged per
 * country and shipped in EcoLogits 0.9.1 (`ecologits/data/electricity_mixes.csv`, updated 2025-10-09;
 * its `gwp` column, kgCO₂e/kWh × 1000). A country average, not a regional or hourly figure.
 */
export const GRID_SOURCE = 'ADEME Base Empreinte, per-country averages as shipped in EcoLogits 0.9.1 (2025)';

export const GRID_G_PER_KWH: Readonly<Record<string, number>> = {
  ARG: 358.95,
  AUS: 551.59,
  BRA: 103.21,
  CAN: 174.81,
  CHN: 559.55,
  DEU: 344.14,
  ESP: 146.15,
  FIN: 72.25,
  FRA: 44.18,
  GBR: 210.89,
  IND: 708.32,
  IRL: 279.7,
  ITA: 287.53,
  JPN: 482.32,
  KOR: 414.27,
  NLD: 253.31,
  NOR: 30.75,
  POL: 614.98,
  SWE: 35.82,
  USA: 383.55,
  WOR: 473.01,
};

/** `--grid-intensity`: gCO₂e/kWh, or a region code from {@link GRID_G_PER_KWH}; else E_USAGE. */
export function parseGridIntensity(value: string): GridIntensity {
  const v = value.trim();
  if (/^[0-9]+(\.[0-9]+)?$/.test(v)) {
    const g = Number(v);
    if (!Number.isFinite(g) || g > 5000) throw new JoulebenchError('E_USAGE', `--grid-intensity: ${JSON.stringify(value)} is not a plausible gCO2e/kWh (0–5000)`);
    return { g_per_kwh: g, label: `${g} gCO2e/kWh (given)`, region: null, source: 'given on the command line' };
  }
  const code = v.toUpperCase();
  const g = Object.hasOwn(GRID_G_PER_KWH, code) ? GRID_G_PER_KWH[code] : undefined;
  if (g === undefined) {
    throw new JoulebenchError('E_USAGE', `--grid-intensity: ${JSON.stringify(value)} is neither a number of gCO2e/kWh nor a known region (${Object.keys(GRID_G_PER_KWH).join(', ')})`);
  }
  return { g_per_kwh: g, label: `${g} gCO2e/kWh (${code}, ${GRID_SOURCE})`, region: code, source: GRID_SOURCE };
}
