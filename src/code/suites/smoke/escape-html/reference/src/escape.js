const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe to place inside HTML elements and quoted attributes. */
export function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}
