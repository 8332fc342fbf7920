/** One run as a library call: the orchestration `run`, `sweep` and a queue worker share. */
export { runSession, everyCaseFailed, defaultWarmup, type SessionHooks, type SessionPaths, type SessionReport, type SessionResult } from './run-session.js';
export type { SessionSpec, InlineConfig } from './spec.js';
export { buildSuite, buildTargetSpec, type TargetFlags } from './setup.js';
