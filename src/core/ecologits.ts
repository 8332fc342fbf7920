/**
 * Per-request energy of a hosted LLM, by the published EcoLogits methodology, version 0.9.1
 * (https://ecologits.ai/latest/methodology/llm_inference/, genai-impact/ecologits, 2025-11): a model,
 * never a measurement. Written from the method's equations and fitted coefficients; no code copied.
 * Pure: no clock, no I/O.
 *
 * Per request, for P active and P_total total parameters (billions), n output tokens, batch size B:
 * - GPU energy per output token (Wh) = α·e^(β·B)·P + γ, fitted on the ML.ENERGY leaderboard (vLLM on
 *   H100 80GB): α = 1.1665e-6, β = −1.1206e-2, γ = 4.0529e-5. Input tokens are not in the fit.
 * - Generation latency (s) = n·(α_L·P + β_L·B + γ_L), α_L = 6.785e-4, β_L = 3.119e-4, γ_L = 1.947e-2,
 *   capped at the request's measured end-to-end time (the HTTP client's request-to-last-byte, `meta.e2e_ms`).
 * - GPUs = 1.2·P_total·16 bit/8 ÷ 80 GB, rounded up, then up to a power of two.
 * - Server (without GPUs) = latency/3600 · 1.2 kW · GPUs/8 · 1/B (kWh), an 8-GPU p5.48xlarge-class host.
 * - Request = PUE · (server + GPUs · n · GPU energy per token).
 * Uncertainty (EcoLogits' RangeValue): parameter counts and PUE may be ranges; the method is monotone
 * in each, so low uses every low end and high every high end. The point value is the midpoint.
 */

/** A value known to lie between `low` and `high` (equal when known exactly). */
export interface Range {
  low: number;
  high: number;
}

/** The hardware profile EcoLogits 0.9.1 assumes for every hosted model. */
interface HardwareProfile {
  name: string;
  gpu_memory_gb: number;
  server_gpus: number;
  /** Power of the server without its GPUs, kW. */
  server_power_kw: number;
  batch_size: number;
  quantization_bits: number;
}

export const ECOLOGITS_VERSION = '0.9.1';

/** Fitted coefficients (EcoLogits 0.9.1, `ecologits/impacts/llm.py` and the methodology page). */
export const ECOLOGITS_COEFFICIENTS = {
  gpu_energy_alpha: 1.1665273170451914e-6,
  gpu_energy_beta: -0.011205921025579175,
  gpu_energy_gamma: 4.052928146734005e-5,
  latency_alpha: 6.785088094353663e-4,
  latency_beta: 3.119310311688259e-4,
  latency_gamma: 1.9473717579473387e-2,
} as const;

/** `h100-vllm`: EcoLogits' only profile: vLLM on 8×H100 80GB servers, 1.2 kW besides the GPUs, batch 64, 16-bit weights. */
export const H100_VLLM: HardwareProfile = {
  name: 'h100-vllm',
  gpu_memory_gb: 80,
  server_gpus: 8,
  server_power_kw: 1.2,
  batch_size: 64,
  quantization_bits: 16,
};

/**
 * Default PUE when the provider's is not given: the span of the provider PUEs in EcoLogits 0.9.1's
 * data-centre table (Google 1.09 … Microsoft/OpenAI 1.20).
 */
export const DEFAULT_PUE: Range = { low: 1.09, high: 1.2 };

export interface ApiRequestInput {
  active_params_b: Range;
  total_params_b: Range;
  output_tokens: number;
  /** The request's measured latency, s; caps the modelled generation latency. Unknown: no cap. */
  request_latency_s: number | null;
  pue: Range;
  profile?: HardwareProfile;
}

interface ApiRequestEnergy {
  /** Midpoint of the range, J. */
  joules: number;
  range_j: Range;
}

const J_PER_KWH = 3.6e6;

/** The request's energy in J, as a range. Throws RangeError on inputs the method has no meaning for. */
export function ecologitsRequestEnergy(input: ApiRequestInput): ApiRequestEnergy {
  const profile = input.profile ?? H100_VLLM;
  checkRange(input.active_params_b, 'active_params_b', 0);
  checkRange(input.total_params_b, 'total_params_b', 0);
  checkRange(input.pue, 'pue', 1);
  if (!Number.isFinite(input.output_tokens) || input.output_tokens < 0) throw new RangeError(`output_tokens must be >= 0, got ${input.output_tokens}`);
  const at = (end: 'low' | 'high'): number =>
    requestKwh(input.active_params_b[end], input.total_params_b[end], input.output_tokens, input.request_latency_s, input.pue[end], profile) * J_PER_KWH;
  const low = at('low');
  const high = at('high');
  return { joules: (low + high) / 2, range_j: { low, high } };
}

function requestKwh(active_b: number, total_b: number, n: number, latency_cap_s: number | null, pue: number, p: HardwareProfile): number {
  const c = ECOLOGITS_COEFFICIENTS;
  const gpuWhPerToken = c.gpu_energy_alpha * Math.exp(c.gpu_energy_beta * p.batch_size) * active_b + c.gpu_energy_gamma;
  const gpuKwh = (n * gpuWhPerToken) / 1000;
  const modelled_s = n * (c.latency_alpha * active_b + c.latency_beta * p.batch_size + c.latency_gamma);
  const latency_s = latency_cap_s !== null && latency_cap_s < modelled_s ? latency_cap_s : modelled_s;
  const gpus = gpuCount(total_b, p);
  const serverKwh = (latency_s / 3600) * p.server_power_kw * (gpus / p.server_gpus) * (1 / p.batch_size);
  return pue * (serverKwh + gpus * gpuKwh);
}

/** GPUs needed to hold the weights (+20 %), rounded up to a power of two. */
export function gpuCount(total_b: number, p: HardwareProfile = H100_VLLM): number {
  const memory_gb = (1.2 * total_b * p.quantization_bits) / 8;
  const n = Math.max(1, Math.ceil(memory_gb / p.gpu_memory_gb));
  return 2 ** Math.ceil(Math.log2(n));
}

function checkRange(r: Range, key: string, min: number): void {
  if (!Number.isFinite(r.low) || !Number.isFinite(r.high) || r.low < min || r.high < r.low) {
    throw new RangeError(`${key} must be a number >= ${min} or a range [low, high] with low <= high, got ${JSON.stringify(r)}`);
  }
}
