import { helpWidthOf, quickOutput } from './quick.js';

const argv = process.argv.slice(2);
// --version and --help come from the static command table without loading commander (src/cli/quick.ts).
const quick = quickOutput(argv, helpWidthOf(process.stdout));
if (quick !== null) process.stdout.write(quick);
else process.exitCode = await (await import('./main.js')).main(argv);
