/**
 * Sets the CLI process's V8 heap flags (src/cli/heap-flags.ts: why, and the figures) before anything
 * else is loaded, and keeps the young generation at its cap. Imported first by src/cli/bin.ts only.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { heapFlags, NEW_SPACE_CAP } from './heap-flags.js';

let growing = false;
/** Growth factor 2 while the new space is below the cap, 1 from there. */
function govern(): void {
  const s = getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
  const below = s !== undefined && s.space_size < NEW_SPACE_CAP;
  if (below === growing) return;
  growing = below;
  setFlagsFromString(`--semi-space-growth-factor=${below ? 2 : 1}`);
}

const flags = heapFlags(process.execArgv, process.env.NODE_OPTIONS);
for (const f of flags) setFlagsFromString(f);
if (flags.length > 0) setInterval(govern, 20).unref();
