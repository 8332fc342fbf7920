import { JoulebenchError } from '../core/errors.js';

/** Where the queue's Redis is: what ioredis needs, and a label safe to print (never the password). */
export interface QueueConnection {
  host: string;
  port: number;
  db: number;
  password?: string;
  username?: string;
  /** `redis://host:port/db`, without credentials: the only form that reaches a log, a report or a receipt. */
  display: string;
}

/** Parses `redis://[[user]:password@]host:port[/db]` (or the password from `--queue-password-ref`); E_USAGE otherwise. */
export function parseQueueUrl(url: string, passwordRef: string | undefined, env: NodeJS.ProcessEnv, flag = '--queue'): QueueConnection {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new JoulebenchError('E_USAGE', `${flag} must be a redis:// URL such as redis://127.0.0.1:6379/0`);
  }
  if (u.protocol !== 'redis:') throw new JoulebenchError('E_USAGE', `${flag} must use redis:// (got ${u.protocol})`);
  const port = u.port === '' ? 6379 : Number(u.port);
  const dbPath = u.pathname.replace(/^\//, '');
  if (dbPath !== '' && !/^\d{1,2}$/.test(dbPath)) throw new JoulebenchError('E_USAGE', `${flag}: the path must be a database number (/0 … /15)`);
  const db = dbPath === '' ? 0 : Number(dbPath);
  const c: QueueConnection = { host: u.hostname.replace(/^\[|\]$/g, ''), port, db, display: `redis://${u.hostname}:${port}/${db}` };
  if (u.password) c.password = decodeURIComponent(u.password);
  if (u.username) c.username = decodeURIComponent(u.username);
  if (passwordRef !== undefined) {
    const m = /^env:([A-Za-z_][A-Za-z0-9_]*)$/.exec(passwordRef);
    if (!m) throw new JoulebenchError('E_USAGE', '--queue-password-ref must be env:NAME');
    const v = env[m[1]!];
    if (v === undefined || v === '') throw new JoulebenchError('E_USAGE', `--queue-password-ref: ${m[1]} is not set in this environment`);
    c.password = v;
  }
  return c;
}

/** ioredis options for a connection (BullMQ workers need `maxRetriesPerRequest: null`). */
export function redisOptions(c: QueueConnection): Record<string, unknown> {
  return {
    host: c.host,
    port: c.port,
    db: c.db,
    ...(c.password !== undefined ? { password: c.password } : {}),
    ...(c.username !== undefined ? { username: c.username } : {}),
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    lazyConnect: false,
  };
}

/** Removes a connection's password from a message (ioredis errors may quote the URL). */
export function redactQueue(message: string, c: Pick<QueueConnection, 'password'>): string {
  return c.password ? message.split(c.password).join('***') : message;
}

/** Redis's replies to a connection whose credentials it does not accept. */
const AUTH_REFUSED = /^(WRONGPASS|NOAUTH|WRONGUSER)\b/;

/** Connects once to refuse wrong credentials (E_USAGE): the queue's clients would retry them forever. An unreachable Redis is left to them. */
export async function checkQueueCredentials(c: QueueConnection): Promise<void> {
  const { Redis } = await import('ioredis');
  const probe = new Redis({ ...redisOptions(c), lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null, connectTimeout: 5000 });
  let refused: string | null = null;
  probe.on('error', (e: Error) => {
    if (AUTH_REFUSED.test(e.message)) refused ??= e.message;
  });
  try {
    await probe.connect();
    await probe.ping();
  } catch (e) {
    if (AUTH_REFUSED.test((e as Error).message)) refused ??= (e as Error).message;
  } finally {
    probe.disconnect();
  }
  if (refused !== null) {
    const why = redactQueue(refused.split('\n')[0]!.replace(/\.$/, ''), c);
    throw new JoulebenchError('E_USAGE', `${c.display}: Redis refused the queue's credentials (${why}): check the password in --queue or --queue-password-ref`);
  }
}
