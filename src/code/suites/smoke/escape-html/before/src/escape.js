/** Text made safe to place inside HTML elements and quoted attributes. */
export function escapeHtml(text) {
  return text.replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/&/g, '&amp;');
}
