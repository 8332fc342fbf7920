/**
 * Whether text written to a stream gets colour: never when NO_COLOR is set to anything non-empty
 * (no-color.org), always when FORCE_COLOR is set (other than "0" or "false"), else when that stream
 * is a terminal that is not "dumb". Decided per stream: the table on stderr follows stderr.
 */
export function colorFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}
