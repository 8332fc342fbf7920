import { Agent, EnvHttpProxyAgent, type Dispatcher } from 'undici';
import { guardedLookup } from './openai/guard.js';

/**
 * The HTTP client every target's requests go through: undici's keep-alive pools, routed through
 * `HTTP_PROXY` / `HTTPS_PROXY` and bypassing them for `NO_PROXY` hosts (undici's `EnvHttpProxyAgent`,
 * read when the dispatcher is made; with neither proxy set, a plain `Agent`, which spares every
 * request the `NO_PROXY` match). Every connection it opens, to a server or to a proxy, resolves its
 * host through {@link guardedLookup}, so a name pointing at a metadata address is refused after DNS
 * and before a byte (or the key) goes out. A plain `http://` URL goes to an HTTP proxy in absolute
 * form (as curl does); an `https://` one through a `CONNECT` tunnel. No redirect is followed
 * (undici's dispatcher follows none), and undici's own per-phase timers are off: callers set one
 * limit for the whole attempt.
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
