import { createHash } from 'node:crypto';

/** The frozen default prompt of `joulebench infer`: long enough to measure prefill, identified by its sha256. */
export const DEFAULT_INFER_PROMPT = [
  'You are reviewing the maintenance log of a small municipal water utility. Read the notes below and then',
  'write a short summary of the three most important problems, in order of urgency, with one sentence each.',
  '',
  'Monday: pump station 2 tripped its thermal overload twice between 02:00 and 04:00. The operator reset it',
  'both times. Inlet pressure was normal. The motor casing was hot to the touch at the second reset.',
  'Tuesday: a customer on Alder Street reported brown water after a hydrant flush by the fire department.',
  'Flushing crew opened the hydrant at the end of the main for twenty minutes and the water cleared.',
  'Wednesday: chlorine residual at the north reservoir outlet read 0.2 mg/L, below the 0.5 mg/L target.',
  'The dosing pump stroke was increased by ten percent. A follow-up sample at 16:00 read 0.4 mg/L.',
  'Thursday: the SCADA link to the east tank dropped for forty minutes; the tank level was read manually.',
  'The radio mast at the tank has a loose antenna bracket, noted in March and not yet repaired.',
  'Friday: pump station 2 tripped again at 03:10. The spare motor is on order with an eight-week lead time.',
  'A contractor quoted for a bearing inspection but cannot visit until the end of the month.',
  'Saturday: routine meter readings completed for districts 4 and 5. Two meters were found stopped.',
  'Sunday: no incidents. The north reservoir chlorine residual read 0.45 mg/L at the morning sample.',
  '',
  'Summary:',
].join('\n');

/** Hex sha256 of the prompt's UTF-8 bytes, exactly as sent. */
export function promptSha256(prompt: string): string {
  return createHash('sha256').update(prompt, 'utf8').digest('hex');
}
