import { emitColors } from '../report/colors.js';
import { main } from './main.js';

// Renderers always emit colour; processIO strips it from a stream that should not get any.
emitColors(true);
process.exitCode = await main(process.argv.slice(2));
