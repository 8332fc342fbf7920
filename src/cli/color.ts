/** Whether a stream gets colour: never with NO_COLOR (no-color.org), always with FORCE_COLOR, else on a terminal that is not "dumb". */
export function colorFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}
