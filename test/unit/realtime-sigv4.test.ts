// The realtime sender's Signature Version 4 against the SDK's own signer (@smithy/signature-v4, what the management
// API client signs PostToConnection with): the same authorization for random connection ids, bodies, stages, dates,
// Regions and credentials with and without a session token.
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import fc from 'fast-check';
import { signRequest } from '../../lib/realtime/sigv4';

const bytes = (data: string | ArrayBuffer | ArrayBufferView) =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);

/** The SDK's hash interface on node:crypto (what @smithy/hash-node gives the SDK's clients). */
class Sha256 {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

const connectionId = fc.string({ unit: fc.constantFrom(...'ABCxyz019+/=_-'.split('')), minLength: 1, maxLength: 16 });

describe('signRequest (PostToConnection)', () => {
  it('signs as the SDK signs', async () => {
    await fc.assert(
      fc.asyncProperty(
        connectionId,
        fc.string({ maxLength: 200 }),
        fc.constantFrom('prod', 'dev', 'my-stage'),
        fc.date({ min: new Date('2020-01-01'), max: new Date('2035-01-01'), noInvalidDate: true }),
        fc.constantFrom('us-east-1', 'eu-west-3'),
        fc.option(fc.string({ unit: fc.constantFrom(...'AQoDYXdzEJr/+='.split('')), minLength: 8, maxLength: 40 }), {
          nil: undefined,
        }),
        async (id, text, stage, now, region, sessionToken) => {
          const host = 'abc123.execute-api.us-east-1.amazonaws.com';
          const path = `/${stage}/@connections/${encodeURIComponent(id)}`;
          const body = Buffer.from(text, 'utf8');
          const credentials = {
            accessKeyId: 'AKIDEXAMPLE',
            secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
            sessionToken,
          };
          const ours = signRequest({
            method: 'POST',
            host,
            path,
            body,
            region,
            service: 'execute-api',
            credentials,
            now,
          });
          const signer = new SignatureV4({
            credentials,
            region,
            service: 'execute-api',
            sha256: Sha256,
            applyChecksum: false,
          });
          const theirs = await signer.sign(
            { method: 'POST', protocol: 'https:', hostname: host, path, headers: { host }, body, query: {} },
            { signingDate: now },
          );
          expect(ours.authorization).toBe(theirs.headers.authorization);
          expect(ours['x-amz-date']).toBe(theirs.headers['x-amz-date']);
          expect(ours['x-amz-security-token']).toBe(theirs.headers['x-amz-security-token']);
        },
      ),
      { numRuns: 200 },
    );
  });
});
