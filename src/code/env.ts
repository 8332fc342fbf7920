/**
 * The environment a solver and the task's tests see: the caller's, minus variables that look like
 * secrets (API keys, tokens, passwords) unless named with `--pass-env`, minus the test runner's own
 * context variables (a nested `node --test` would otherwise report to the outer one).
 */

/** Names that look like they hold a secret. */
export const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE|DSN|WEBHOOK)/i;

/** Variables dropped because they belong to the process running joulebench, not to the task. */
const ALWAYS_DROP = /^(NODE_TEST_CONTEXT|NODE_TEST_.*|NODE_CHANNEL_FD|NODE_UNIQUE_ID)$/;

/** Drops secret-looking variables except those in `pass` (exact names); `scrubbed`: the names removed, never values. */
export function scrubEnv(base: NodeJS.ProcessEnv, pass: readonly string[] = []): { env: NodeJS.ProcessEnv; scrubbed: string[] } {
  const keep = new Set(pass);
  const env: NodeJS.ProcessEnv = {};
  const scrubbed: string[] = [];
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined || ALWAYS_DROP.test(k)) continue;
    if (SECRET_NAME.test(k) && !keep.has(k)) {
      scrubbed.push(k);
      continue;
    }
    env[k] = v;
  }
  return { env, scrubbed: scrubbed.sort() };
}
