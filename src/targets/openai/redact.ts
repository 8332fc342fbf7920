/** What replaces a secret in any message. */
export const REDACTED = '[REDACTED]';

/**
 * Removes a secret from a message: the secret itself, and anything shaped like a bearer token or an
 * `sk-` key (a server may echo a key we never sent, e.g. from its own config). One line out.
 */
export function redact(message: string, secret: string | undefined): string {
  let s = message;
  if (secret && secret.length > 0) s = s.split(secret).join(REDACTED);
  s = s.replace(/(bearer\s+)[^\s"',;]+/gi, `$1${REDACTED}`);
  s = s.replace(/\bsk-[A-Za-z0-9_\-]{8,}/g, REDACTED);
  return s.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}
