import http from 'node:http';
import net from 'node:net';

/** A forward proxy on 127.0.0.1 (port 0): absolute-URI requests for `http://` URLs, `CONNECT` tunnels for `https://` ones. */
export interface ForwardProxy {
  url: string;
  /** What it was asked, in order: `GET http://host:port/path` (absolute form) or `CONNECT host:port`. */
  seen: string[];
  /** The `Authorization` header of each absolute-form request (a `CONNECT` carries none; the key travels inside the tunnel). */
  authorizations: (string | undefined)[];
  close(): Promise<void>;
}

export async function startForwardProxy(): Promise<ForwardProxy> {
  const seen: string[] = [];
  const authorizations: (string | undefined)[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    authorizations.push(req.headers.authorization);
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('not an absolute URI');
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    const up = http.request(target, { method: req.method, headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res); // chunk by chunk, so a stream's timing survives the proxy
    });
    up.on('error', () => res.writeHead(502).end('upstream failed'));
    req.pipe(up);
  });
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    seen.push(`CONNECT ${req.url}`);
    const [host, port] = (req.url ?? '').split(/:(?=\d+$)/);
    const up = net.connect(Number(port), host!, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    sockets.add(up);
    up.on('close', () => sockets.delete(up));
    up.on('error', () => client.destroy());
    client.on('error', () => up.destroy());
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    authorizations,
    close: () =>
      new Promise<void>((ok) => {
        for (const s of sockets) s.destroy();
        server.close(() => ok());
      }),
  };
}
