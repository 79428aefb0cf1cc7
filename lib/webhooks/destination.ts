// Webhooks: where a webhook may point (no SSRF): the URL's form, and every address its host resolves to.
import { lookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { BadRequest } from '../config/errors';
import { MAX_WEBHOOK_URL_LENGTH } from '../config/limits';

/**
 * Local runs (the local runtime sets it; never serverless.yml) may deliver to loopback, over http too, so tests can
 * receive. Read on every call: nothing else changes.
 */
export const loopbackAllowed = () => process.env.WEBHOOKS_ALLOW_LOOPBACK === 'true';

/**
 * Why an address may not be a destination, or undefined when it may: only global unicast is, IPv4-mapped IPv6
 * judged as the IPv4 it carries (`::ffff:127.0.0.1` is loopback). Every other range ipaddr.js names (private,
 * loopback, link-local with 169.254.169.254, unique-local, multicast, unspecified, broadcast, carrier-grade NAT,
 * reserved, 6to4, Teredo, NAT64 prefixes that may wrap a private IPv4...) is refused.
 */
export function refusedAddress(address: string, allowLoopback = loopbackAllowed()): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  if (range === 'unicast') return undefined;
  if (range === 'loopback' && allowLoopback) return undefined;
  return range;
}

const invalidUrl = (message: string) => new BadRequest('INVALID_WEBHOOK_URL', message);
const forbidden = (message: string) => new BadRequest('FORBIDDEN_DESTINATION', message);

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
  if (url.protocol === 'http:' && addresses.some(({ address }) => refusedAddress(address, false) === undefined))
    throw invalidUrl('url must be an https URL unless it points to loopback in a local run');
  return addresses;
}

/** A registration's check: the URL's form, then its host's addresses. */
export async function checkWebhookUrl(text: unknown): Promise<URL> {
  const url = parseWebhookUrl(text);
  await resolveDestination(url);
  return url;
}
