import { Agent, EnvHttpProxyAgent, type Dispatcher } from 'undici';
import { guardedLookup } from './openai/guard.js';

/** The undici dispatcher of every target: keep-alive pools, `HTTP(S)_PROXY`/`NO_PROXY`, the guarded lookup, no per-phase timers. */
export function createDispatcher(): Dispatcher {
  const guard = { lookup: guardedLookup };
  const options = { connect: guard, headersTimeout: 0, bodyTimeout: 0 };
  return proxyConfigured() ? new EnvHttpProxyAgent({ ...options, proxyTls: guard, proxyTunnel: false }) : new Agent(options);
}

/** Whether `HTTP_PROXY` or `HTTPS_PROXY` (either case) is set: some requests may then go through a proxy. */
export function proxyConfigured(): boolean {
  return Boolean(process.env.http_proxy || process.env.HTTP_PROXY || process.env.https_proxy || process.env.HTTPS_PROXY);
}
