/** Names and addresses of this machine's loopback interface (the viewer's default bind, and the Host names it accepts there). */
export const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export const isLoopback = (host: string): boolean => LOOPBACK.has(host);
