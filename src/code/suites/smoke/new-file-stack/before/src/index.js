/** Small data structures. The stack lives in ./stack.js. */
export const VERSION = '0.1.0';
