/** Case rows the HTML page embeds at most, over every run: only these are read whole from a results file. */
export const HTML_CASE_ROWS = 20_000;
