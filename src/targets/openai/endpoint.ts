import { JoulebenchError } from '../../core/errors.js';
import { quote } from '../../core/one-line.js';
import { isForbiddenAddress } from './guard.js';

/** Parses and checks an endpoint URL; refuses credentials in it and link-local/metadata hosts. */
export function checkEndpoint(endpoint: string, key = 'target.endpoint'): URL {
  // The URL parser strips tabs and newlines silently; an endpoint with one is refused, not repaired.
  if (/[\u0000-\u001f\u007f]/.test(endpoint)) throw new JoulebenchError('E_CONFIG', `${key} must not contain control characters (CR, LF, tab, …), got ${quote(endpoint)}`);
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new JoulebenchError('E_CONFIG', `${key} must be an absolute http(s) URL, got ${quote(endpoint)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new JoulebenchError('E_CONFIG', `${key} must use http or https, got ${quote(url.protocol)}`);
  if (url.username || url.password) throw new JoulebenchError('E_CONFIG', `${key} must not carry credentials (use target.credentials_ref: env:NAME)`);
  if (isForbiddenAddress(url.hostname)) {
    throw new JoulebenchError('E_CONFIG', `${key}: ${url.hostname} is a link-local or cloud-metadata address; joulebench never sends requests there`);
  }
  return url;
}
