import { Agent, EnvHttpProxyAgent, type Dispatcher } from 'undici';
import { guardedLookup } from './openai/guard.js';

/**
 * The HTTP client every target's requests go through: undici's keep-alive pools, through `HTTP(S)_PROXY`
 * except for `NO_PROXY` hosts (a plain `Agent` when no proxy is set). Every connection, to a server or a
 * proxy, resolves through {@link guardedLookup}. No redirect is followed and undici's per-phase timers
 * are off: callers set one limit for the whole attempt.
 */
export function createDispatcher(): Dispatcher {
  const guard = { lookup: guardedLookup };
  const options = { connect: guard, headersTimeout: 0, bodyTimeout: 0 };
  return proxyConfigured() ? new EnvHttpProxyAgent({ ...options, proxyTls: guard, proxyTunnel: false }) : new Agent(options);
}

/** Whether `HTTP_PROXY` or `HTTPS_PROXY` (either case) is set: some requests may then go through a proxy. */
export function proxyConfigured(): boolean {
  return Boolean(process.env.http_proxy || process.env.HTTP_PROXY || process.env.https_proxy || process.env.HTTPS_PROXY);
}
