#!/usr/bin/env node
// Rewrites the command overview and the "Every flag" section of docs/commands.md from the built CLI's own
// command table (dist/cli/program.js) and --help (run after `npm run build`).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { COMMANDS } from '../dist/cli/program.js';

const env = { ...process.env, NO_COLOR: '1', COLUMNS: '200' };
const jb = (...args) => execFileSync(process.execPath, ['bin/joulebench.js', ...args], { env, encoding: 'utf8' });
const commands = Object.keys(COMMANDS);
const doc = 'docs/commands.md';
let text = readFileSync(doc, 'utf8');
// The overview: one row per entry of the command table, between the two markers.
const [open, close] = ['<!-- generated: command table (scripts/gen-commands-doc.mjs) -->', '<!-- end of generated command table -->'];
const rows = ['| command | what it does |', '| --- | --- |', ...commands.map((c) => `| \`joulebench ${COMMANDS[c].term}\` | ${COMMANDS[c].summary.replaceAll('|', '\\|')} |`)];
const a = text.indexOf(open);
const b = text.indexOf(close);
if (a < 0 || b < a) throw new Error(`${doc}: the markers of the command table are missing`);
text = `${text.slice(0, a + open.length)}\n${rows.join('\n')}\n${text.slice(b)}`;
const start = text.indexOf('## Every flag');
const head = start >= 0 ? text.slice(0, start) : text.replace(/\n\[← back to the README\]\(\.\.\/README\.md\)\n$/, '\n');
const parts = ['## Every flag', '', 'Generated from `joulebench COMMAND --help` by `scripts/gen-commands-doc.mjs` (a test checks that every flag the CLI has is on this page).', ''];
for (const c of commands) parts.push(`### \`joulebench ${c}\``, '', '```', jb(c, '--help').trimEnd(), '```', '');
writeFileSync(doc, `${head.trimEnd()}\n\n${parts.join('\n')}\n[← back to the README](../README.md)\n`);
console.log(`docs/commands.md: ${commands.length} commands`);
