import { spawn } from 'node:child_process';
import { Command } from 'commander';
import { JoulebenchError } from '../../core/errors.js';
import { defaultHistoryPath } from '../../report/history.js';
import type { CliIO } from '../io.js';
import { intAtLeast } from '../options.js';
import { isLoopback } from '../../view/loopback.js';

interface ViewFlags {
  port: number;
  host: string;
  token?: string;
  open: boolean;
}

/** The system's opener for a URL; absent or failing, nothing happens (the URL is printed anyway). */
function openBrowser(url: string): void {
  const [cmd, args] = process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '', url]] : ['xdg-open', [url]];
  try {
    spawn(cmd, args, { stdio: 'ignore', detached: true }).on('error', () => {}).unref();
  } catch {
    // no opener: the printed URL is enough
  }
}

export function viewCommand(io: CliIO): Command {
  return new Command('view')
    .description('browse the history and named results, reports and sweep folders in a local read-only web viewer: runs, transcripts, compare, trends')
    .argument('[paths...]', 'results JSONL, report JSON, code results, infer run files, sweep folders or rate-sweep documents to serve beside the history')
    .option('--port <n>', 'port to listen on (0: any free port)', intAtLeast(0, 65535), 7411)
    .option('--host <address>', 'address to bind; anything but loopback needs --token', '127.0.0.1')
    .option('--token <secret>', 'require this token on every request (Authorization: Bearer, or ?token= once, which sets a cookie); env:NAME reads it from that variable, out of the process list')
    .option('--no-open', 'do not open a browser')
    .action(async (paths: string[], flags: ViewFlags) => {
      const name = flags.token === undefined ? null : /^env:([A-Za-z_][A-Za-z0-9_]*)$/.exec(flags.token)?.[1];
      if (name) {
        if (!process.env[name]) throw new JoulebenchError('E_USAGE', `--token env:${name}: that environment variable is not set`);
        flags.token = process.env[name];
      }
      if (!isLoopback(flags.host) && !flags.token) throw new JoulebenchError('E_USAGE', `--host ${flags.host}: serving beyond this machine needs --token <secret>`);
      if (flags.token !== undefined && flags.token.length < 8) throw new JoulebenchError('E_USAGE', '--token: at least 8 characters');
      // Loaded here: hono and the pages never slow another command or --help.
      const { startViewer } = await import('../../view/server.js');
      const viewer = await startViewer({ paths, host: flags.host, port: flags.port, token: flags.token ?? null, historyPath: defaultHistoryPath() });
      io.out(`joulebench view: ${viewer.url}${flags.token ? ' (open it with ?token=<your token> once)' : ''}\n`);
      if (flags.open) openBrowser(viewer.url);
      await new Promise<void>((done) => {
        const stop = () => void viewer.close().then(done);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
