import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, promises as dnsPromises, type LookupAddress } from 'node:dns';

/** Link-local addresses (where cloud metadata services live: 169.254.169.254, fd00:ec2::254) and Alibaba's 100.100.100.200. */
const FORBIDDEN = (() => {
  const b = new BlockList();
  b.addSubnet('169.254.0.0', 16, 'ipv4');
  b.addSubnet('fe80::', 10, 'ipv6');
  b.addAddress('fd00:ec2::254', 'ipv6');
  b.addAddress('100.100.100.200', 'ipv4');
  return b;
})();

/** True when `ip` (v4, v6 or v4-mapped v6) is link-local or a cloud-metadata address. */
export function isForbiddenAddress(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 4) return FORBIDDEN.check(bare, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
    if (mapped?.[1]) return FORBIDDEN.check(mapped[1], 'ipv4');
    return FORBIDDEN.check(bare, 'ipv6');
  }
  return false;
}

/** An error raised when a connection would go to a forbidden address. */
class ForbiddenAddressError extends Error {
  readonly code = 'E_FORBIDDEN_ADDRESS';
  constructor(readonly host: string, readonly address: string) {
    super(`refusing to connect to ${host} (${address}): link-local and cloud-metadata addresses are never contacted`);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` hook that refuses forbidden addresses after DNS, before the socket (and the key) goes out. */
export function guardedLookup(hostname: string, options: object, callback: LookupCallback): void {
  dnsLookup(hostname, { ...(options as Record<string, unknown>) }, ((err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => {
    if (err) return callback(err, address, family);
    const list = Array.isArray(address) ? address.map((a) => a.address) : [address];
    const bad = list.find(isForbiddenAddress);
    if (bad !== undefined) return callback(new ForbiddenAddressError(hostname, bad) as unknown as NodeJS.ErrnoException, address, family);
    callback(null, address, family);
  }) as never);
}

/** Throws {@link ForbiddenAddressError} when any address of `hostname` is forbidden (for requests through a proxy). */
export async function assertHostAllowed(hostname: string): Promise<void> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (isIP(bare)) {
    if (isForbiddenAddress(bare)) throw new ForbiddenAddressError(hostname, bare);
    return;
  }
  let addrs: LookupAddress[];
  try {
    addrs = await dnsPromises.lookup(bare, { all: true });
  } catch {
    return; // unresolvable: the request itself fails with the resolver's error
  }
  const bad = addrs.find((a) => isForbiddenAddress(a.address));
  if (bad) throw new ForbiddenAddressError(hostname, bad.address);
}
