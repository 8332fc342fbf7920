const LEADING_QUESTION = /^(?:what is the|what is|what s the|whats the|what are the|tell me the|give me the|which is the) /;

/** Lowercase, punctuation to spaces, whitespace collapsed: the key form every store compares in. */
export function normalizeText(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** `normalizeText` minus a leading "what is the …" so "What is the default port for SSH?" keys as "default port for ssh". */
export function normalizeKey(text: string): string {
  return normalizeText(text).replace(LEADING_QUESTION, '');
}
