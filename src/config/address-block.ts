import { isIP } from 'node:net';

/** An address or a CIDR block of them, as `server.trustedProxies` lists them (`10.0.0.0/8`, `2001:db8::/32`, `::1`). */
export interface AddressBlock {
  address: string;
  /** the bits that must match: 32 or 128 for a single address */
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** The block `text` names, or undefined when it names none (the config says so, with its path). */
export function parseAddressBlock(text: string): AddressBlock | undefined {
  const parts = text.split('/');
  if (parts.length > 2) return undefined;
  const [address = '', bits] = parts;
  const version = isIP(address);
  if (version === 0) return undefined;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const most = version === 4 ? 32 : 128;
  if (bits === undefined) return { address, prefix: most, family };
  if (!/^[0-9]{1,3}$/.test(bits) || Number(bits) > most) return undefined;
  return { address, prefix: Number(bits), family };
}
