import { DEFAULTS } from './defaults.js';

/** The user's settings with the defaults filled in. */
export function loadConfig(user) {
  return {
    retries: user.retries || DEFAULTS.retries,
    verbose: user.verbose || DEFAULTS.verbose,
  };
}
