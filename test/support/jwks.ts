// A local identity provider for tests: RS256 and ES256 signing keys, their JWKS served over HTTP on loopback.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const TEST_ISSUER = 'https://id.example.test/';
export const TEST_AUDIENCE = 'content-api';

type Jwk = Record<string, unknown> & { kid: string; alg: string };

export interface TestSigningKeys {
  rs256: Jwk;
  es256: Jwk;
  /** Not published in the JWKS: tokens it signs must be rejected. */
  stranger: Jwk;
}

function keyPair(type: 'rsa' | 'ec', kid: string, alg: string) {
  const { publicKey, privateKey } =
    type === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    public: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' },
    private: { ...privateKey.export({ format: 'jwk' }), kid, alg },
  };
}

export async function startJwks(): Promise<{ server: Server; url: string; keys: TestSigningKeys }> {
  const rs = keyPair('rsa', 'rs-1', 'RS256');
  const es = keyPair('ec', 'es-1', 'ES256');
  const stranger = keyPair('rsa', 'rs-1', 'RS256');
  const body = JSON.stringify({ keys: [rs.public, es.public] });
  const server = createServer((req, res) => {
    res.writeHead(req.url === '/.well-known/jwks.json' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(req.url === '/.well-known/jwks.json' ? body : '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    keys: { rs256: rs.private, es256: es.private, stranger: stranger.private } as TestSigningKeys,
  };
}
