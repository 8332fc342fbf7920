#!/usr/bin/env node
// Rewrites the "Every flag" section of docs/commands.md from the built CLI's own --help (run after `npm run build`).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const env = { ...process.env, NO_COLOR: '1', COLUMNS: '200' };
const jb = (...args) => execFileSync(process.execPath, ['bin/joulebench.js', ...args], { env, encoding: 'utf8' });
const commands = [...jb('--help').matchAll(/^  ([a-z][a-z-]*)\b/gm)].map((m) => m[1]).filter((c) => c !== 'help');
const doc = 'docs/commands.md';
const text = readFileSync(doc, 'utf8');
const start = text.indexOf('## Every flag');
const head = start >= 0 ? text.slice(0, start) : text.replace(/\n\[← back to the README\]\(\.\.\/README\.md\)\n$/, '\n');
const parts = ['## Every flag', '', 'Generated from `joulebench COMMAND --help` by `scripts/gen-commands-doc.mjs` (a test checks that every flag the CLI has is on this page).', ''];
for (const c of commands) parts.push(`### \`joulebench ${c}\``, '', '```', jb(c, '--help').trimEnd(), '```', '');
writeFileSync(doc, `${head.trimEnd()}\n\n${parts.join('\n')}\n[← back to the README](../README.md)\n`);
console.log(`docs/commands.md: ${commands.length} commands`);
