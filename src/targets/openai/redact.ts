/** What replaces a secret in any message. */
const REDACTED = '[REDACTED]';

/** Removes a secret, and anything shaped like a bearer token or an `sk-` key, from a message; one line out. */
export function redact(message: string, secret: string | undefined): string {
  let s = redactQuery(message);
  if (secret && secret.length > 0) s = s.split(secret).join(REDACTED);
  s = s.replace(/(bearer\s+)[^\s"',;]+/gi, `$1${REDACTED}`);
  s = s.replace(/\bsk-[A-Za-z0-9_\-]{8,}/g, REDACTED);
  return s.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

/** Removes every occurrence of a secret from an answer's text, keeping its layout and guessing at no key shapes. */
export function redactText(text: string, secret: string | undefined): string {
  return secret && secret.length > 0 && text.includes(secret) ? text.split(secret).join(REDACTED) : text;
}

/** {@link redactText} over every string inside a JSON-like value (an answer's `meta`). */
export function redactDeep<T>(value: T, secret: string | undefined): T {
  if (!secret) return value;
  if (typeof value === 'string') return redactText(value, secret) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, secret)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [redactText(k, secret), redactDeep(v, secret)])) as T;
  }
  return value;
}

/** Query parameters that carry a credential: `?api-key=`, `?key=`, `?token=`, `?access_token=`, `?sig=`, … */
const SECRET_PARAM = /([?&;](?:[\w.-]*[-_.])?(?:api[-_]?key|apikey|key|token|secret|password|passwd|pwd|sig|signature|auth|authorization|credential|credentials|code)=)[^&#\s"'<>]*/gi;

/** Replaces the value of every credential-shaped query parameter in a text (a URL, an error line) with `[REDACTED]`. */
export function redactQuery(text: string): string {
  return text.includes('=') ? text.replace(SECRET_PARAM, `$1${REDACTED}`) : text;
}
