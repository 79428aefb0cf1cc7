// Webhooks: where a webhook may point (no SSRF): the URL's form, and every address its host resolves to.
import { lookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { Refusal } from '../config/errors';
import { MAX_WEBHOOK_URL_LENGTH } from '../config/limits';

/**
 * Local runs (the local runtime sets it; never serverless.yml) may deliver to loopback, over http too, so tests can
 * receive. Read on every call: nothing else changes.
 */
export const loopbackAllowed = () => process.env.WEBHOOKS_ALLOW_LOOPBACK === 'true';

/**
 * IPv6 ranges that carry an IPv4 address, with where it sits: a destination in one reaches (through the host's
 * stack, a NAT64 gateway or a 6to4/Teredo relay) an IPv4 host the filter never judged. None is a destination.
 */
const IPV4_CARRIERS: Array<{ range: [ipaddr.IPv6, number]; name: string; ipv4?: (bytes: number[]) => number[] }> = [
  // `::a.b.c.d` (deprecated by RFC 4291): the URL parser writes `[::127.0.0.1]` as `[::7f00:1]`. (IPv4-mapped
  // `::ffff:a.b.c.d` is not here: it is judged as the IPv4 it is, loopback included.)
  { range: ipaddr.IPv6.parseCIDR('::/96'), name: 'ipv4Compatible', ipv4: (b) => b.slice(12, 16) },
  { range: ipaddr.IPv6.parseCIDR('64:ff9b::/96'), name: 'nat64', ipv4: (b) => b.slice(12, 16) },
  // RFC 8215's local-use prefix: where the IPv4 sits depends on the prefix length the network chose.
  { range: ipaddr.IPv6.parseCIDR('64:ff9b:1::/48'), name: 'nat64' },
  { range: ipaddr.IPv6.parseCIDR('2002::/16'), name: '6to4', ipv4: (b) => b.slice(2, 6) },
  // Teredo: the client's IPv4 in the last 32 bits, inverted.
  { range: ipaddr.IPv6.parseCIDR('2001::/32'), name: 'teredo', ipv4: (b) => b.slice(12, 16).map((x) => x ^ 0xff) },
];

/**
 * An IPv6 literal's dotted IPv4 tail as two hex groups (`::127.0.0.1` -> `::7f00:1`, as the URL parser writes it):
 * ipaddr.js reads any dotted tail as IPv4-mapped (`::ffff:7f00:1`), which would hide an IPv4-compatible address.
 */
function withHexIpv4Tail(address: string): string {
  if (!address.includes(':')) return address;
  return address.replace(/:(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/, (_, a, b, c, d) => {
    const group = (high: string, low: string) => ((Number(high) << 8) | Number(low)).toString(16);
    return `:${group(a, b)}:${group(c, d)}`;
  });
}

/**
 * Why an IPv6 address that carries an IPv4 one may not be a destination: the carried address's range when that is
 * not public (`loopback` for `::7f00:1`), else the carrier's name. Undefined for `::`, `::1` and every other address.
 */
function carriedIpv4Refusal(address: ipaddr.IPv6): string | undefined {
  const range = address.range();
  if (range === 'unspecified' || range === 'loopback' || range === 'ipv4Mapped') return undefined;
  const carrier = IPV4_CARRIERS.find(({ range: cidr }) => address.match(cidr));
  if (!carrier) return undefined;
  const ipv4 = carrier.ipv4 ? new ipaddr.IPv4(carrier.ipv4(address.toByteArray())).range() : undefined;
  return ipv4 && ipv4 !== 'unicast' ? ipv4 : carrier.name;
}

/**
 * Why an address may not be a destination, or undefined when it may: only global unicast is. IPv4-mapped IPv6 is
 * judged as the IPv4 it carries (`::ffff:127.0.0.1` is loopback, allowed only where loopback is); every other form
 * that carries an IPv4 (IPv4-compatible `::/96`, NAT64, 6to4, Teredo) is refused, named by the carried address's
 * range when that is private or reserved. Every other range ipaddr.js names (private, loopback, link-local with
 * 169.254.169.254, unique-local, multicast, unspecified, broadcast, carrier-grade NAT, reserved...) is refused.
 */
export function refusedAddress(
  address: string,
  { allowLoopback = loopbackAllowed() }: { allowLoopback?: boolean } = {},
): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  // Judged as written, before ipaddr.process turns an IPv4-mapped address into its IPv4.
  const hexForm = withHexIpv4Tail(address);
  const written = ipaddr.parse(hexForm);
  if (written.kind() === 'ipv6') {
    const carried = carriedIpv4Refusal(written as ipaddr.IPv6);
    if (carried) return carried;
  }
  const range = ipaddr.process(hexForm).range();
  if (range === 'unicast') return undefined;
  if (range === 'loopback' && allowLoopback) return undefined;
  return range;
}

const invalidUrl = (message: string) => new Refusal('INVALID_WEBHOOK_URL', message);
const forbidden = (message: string) => new Refusal('FORBIDDEN_DESTINATION', message);

/** The host as DNS or an address literal names it: IPv6 literals without their brackets. */
const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** The URL's form: https (http to a loopback host in local runs), no credentials, at most 2048 characters. */
export function parseWebhookUrl(text: unknown): URL {
  if (typeof text !== 'string' || text.length === 0) throw invalidUrl('url is required and must be a string');
  if (text.length > MAX_WEBHOOK_URL_LENGTH)
    throw invalidUrl(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidUrl('url must be an absolute URL');
  }
  const local = loopbackAllowed();
  if (url.protocol !== 'https:' && !(local && url.protocol === 'http:'))
    throw invalidUrl(local ? 'url must be an https or (locally) http URL' : 'url must be an https URL');
  if (url.username || url.password) throw invalidUrl('url must not carry a user name or password');
  if (url.hash) throw invalidUrl('url must not have a fragment');
  return url;
}

/** Every address the host resolves to (an address literal: itself); refused unless all of them may be reached. */
export async function resolveDestination(url: URL): Promise<LookupAddress[]> {
  const host = bareHost(url);
  let addresses: LookupAddress[];
  if (ipaddr.isValid(host)) addresses = [{ address: host, family: host.includes(':') ? 6 : 4 }];
  else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch {
      throw forbidden(`url's host ${host} does not resolve`);
    }
  }
  if (addresses.length === 0) throw forbidden(`url's host ${host} does not resolve`);
  for (const { address } of addresses) {
    const why = refusedAddress(address);
    if (why) throw forbidden(`url resolves to ${address} (${why}), which is not a public address`);
  }
  // http is for local runs only, and only to loopback.
  if (
    url.protocol === 'http:' &&
    addresses.some(({ address }) => refusedAddress(address, { allowLoopback: false }) === undefined)
  )
    throw invalidUrl('url must be an https URL unless it points to loopback in a local run');
  return addresses;
}

/** A registration's check: the URL's form, then its host's addresses. */
export async function checkWebhookUrl(text: unknown): Promise<URL> {
  const url = parseWebhookUrl(text);
  await resolveDestination(url);
  return url;
}
