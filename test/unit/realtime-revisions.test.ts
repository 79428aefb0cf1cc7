// Revisions only grow per project, whatever the stream's sequence numbers do (a restarted local engine, a shard's
// successors): the change log is faked here, the decision is revisionFor's.
import type { DynamoDBRecord } from 'aws-lambda';

const logged = new Set<string>();
let revisions: typeof import('../../lib/realtime/revisions');
beforeAll(async () => {
  // The transform does not hoist jest.mock: the fake log is registered before the module is loaded.
  jest.doMock('../../lib/realtime/change-log', () => ({
    lastRevision: async () => [...logged].sort().at(-1) ?? '0',
    isLogged: async (_inc: string, revision: string) => logged.has(revision),
  }));
  revisions = await import('../../lib/realtime/revisions');
});
const formatRevision = (n: bigint) => revisions.formatRevision(n);

const record = (sequence: number) => ({ dynamodb: { SequenceNumber: String(sequence) } }) as DynamoDBRecord;

async function give(inc: string, sequence: number): Promise<string> {
  const revision = await revisions.revisionFor(inc, record(sequence));
  logged.add(revision);
  return revision;
}

describe('revisionFor', () => {
  beforeEach(() => logged.clear());

  it('is the sequence number while numbers grow', async () => {
    expect(await give('a', 5)).toBe(formatRevision(5n));
    expect(await give('a', 9)).toBe(formatRevision(9n));
  });

  it('numbers that went backwards (an engine restarted) continue above the last revision', async () => {
    logged.add(formatRevision(111n));
    expect(await give('b', 45)).toBe(formatRevision(112n));
    expect(await give('b', 46)).toBe(formatRevision(113n));
    expect(await give('b', 500)).toBe(formatRevision(500n));
  });

  it('a record delivered again keeps the revision it was logged under', async () => {
    expect(await give('c', 7)).toBe(formatRevision(7n));
    expect(await give('c', 8)).toBe(formatRevision(8n));
    expect(await give('c', 7)).toBe(formatRevision(7n));
    expect(await give('c', 9)).toBe(formatRevision(9n));
  });
});
