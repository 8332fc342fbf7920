import { DEFAULT_PUE, ECOLOGITS_COEFFICIENTS, ECOLOGITS_VERSION, ecologitsRequestEnergy, H100_VLLM, type Range } from '../core/ecologits.js';
import type { Energy } from '../core/types.js';
import type { z } from 'zod';
import type { energyModelSchema } from '../config/schema.js';
import { lookupModelParams } from './params.js';

/** `target.energy_model` in the config (docs/energy-sources.md): overrides for the model:api estimate, as its schema checks them. */
export type EnergyModelConfig = z.infer<typeof energyModelSchema>;

/** What the estimate rests on, for the receipt. */
export interface ApiEnergyFacts {
  method: string;
  model: string;
  params_from: 'table' | 'config';
  active_params_b: Range;
  total_params_b: Range;
  pue: Range;
  hardware: string;
  coefficients: typeof ECOLOGITS_COEFFICIENTS;
  covers: string;
}

/** The model:api estimate for one target's model, or why there is none. */
export type ApiEnergyModel =
  | { known: true; facts: ApiEnergyFacts; energy(output_tokens: number | null, latency_ms: number | null): Energy }
  | { known: false; reason: string };

const range = (v: number | [number, number]): Range => (typeof v === 'number' ? { low: v, high: v } : { low: v[0], high: v[1] });

/** The EcoLogits estimate for `model`: parameter counts from the config, else the committed table; else none, never a guess. */
export function apiEnergyModel(model: string, cfg: EnergyModelConfig = {}): ApiEnergyModel {
  if (cfg.enabled === false) return { known: false, reason: 'target.energy_model.enabled is false' };
  const listed = lookupModelParams(model);
  const active = cfg.active_params_b !== undefined ? range(cfg.active_params_b) : listed && range(listed.active_b);
  if (!active) return { known: false, reason: `no parameter count for model "${model}" (set target.energy_model.active_params_b)` };
  const total = cfg.total_params_b !== undefined ? range(cfg.total_params_b) : listed ? range(listed.total_b) : active;
  const pue = cfg.pue !== undefined ? range(cfg.pue) : DEFAULT_PUE;
  const facts: ApiEnergyFacts = {
    method: `EcoLogits ${ECOLOGITS_VERSION} (per request, output tokens)`,
    model,
    params_from: cfg.active_params_b !== undefined ? 'config' : 'table',
    active_params_b: active,
    total_params_b: total,
    pue,
    hardware: H100_VLLM.name,
    coefficients: ECOLOGITS_COEFFICIENTS,
    covers: 'output tokens only (the method has no input-token term); GPU + server share × PUE; no network, storage or embodied energy',
  };
  const estimate = (output_tokens: number, request_latency_s: number | null) =>
    ecologitsRequestEnergy({ active_params_b: active, total_params_b: total, output_tokens, request_latency_s, pue });
  // Check the inputs once, here, so a bad override fails at set-up, not on the first answer.
  estimate(0, null);
  return {
    known: true,
    facts,
    energy(output_tokens, latency_ms) {
      if (output_tokens === null) return { joules: null, source: 'none' };
      const e = estimate(output_tokens, latency_ms === null ? null : latency_ms / 1000);
      return { joules: e.joules, source: 'model:api', range_j: e.range_j };
    },
  };
}
