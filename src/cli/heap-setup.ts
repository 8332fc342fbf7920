/** Sets the CLI process's V8 heap flags (heap-flags.ts says why) before anything else loads; imported first by bin.ts only. */
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
