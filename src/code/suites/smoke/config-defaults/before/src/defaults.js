/** Settings used when the user gives none. */
export const DEFAULTS = { retries: '3', verbose: false };
