/**
 * Case rows the HTML page embeds at most, over every run: a million-case run's page stays a few MB,
 * and only these cases are read whole from a results file (the rest are counted and their latencies kept).
 */
export const HTML_CASE_ROWS = 20_000;
