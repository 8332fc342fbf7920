// First: the V8 heap's settings for the CLI process (src/cli/heap-flags.ts).
import './heap-setup.js';
import { helpWidthOf, quickOutput } from './quick.js';

const argv = process.argv.slice(2);
// --version and --help come from the static command table without loading commander (src/cli/quick.ts).
const quick = quickOutput(argv, helpWidthOf(process.stdout));
if (quick !== null) process.stdout.write(quick);
else {
  // Renderers always emit colour; processIO strips it from a stream that should not get any.
  (await import('../report/colors.js')).emitColors(true);
  process.exitCode = await (await import('./main.js')).main(argv);
}
