// Whether a segment read while completing a commit's value still holds what that commit left (commit-reads.ts).
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type CommitView, asOfCommit } from '../../lib/storage/feed/commit-reads';
import { A } from '../../lib/schema/attributes';

const segment = (key: string, raw: Record<string, AttributeValue>) => ({ key, raw });
const commit = (over: Partial<CommitView> = {}): CommitView => ({
  tx: 'T1',
  versions: new Map([['/arr/', 7]]),
  changedLater: () => false,
  ...over,
});

describe('asOfCommit', () => {
  it('a segment that still carries the commit token is as the commit left it', () => {
    expect(asOfCommit(segment('/arr/~c/1/', { [A.transaction]: { S: 'T1' } }), commit())).toBe(true);
  });

  it('a chunk the commit rewrote (its pv names the version the commit gave its array) without the token: changed since', () => {
    const chunk = segment('/arr/~c/1/', { [A.partners]: { M: { '/arr/': { N: '7' } } } });
    expect(asOfCommit(chunk, commit())).toBe(false);
    // Rewritten by a later multi-item commit (its token, a later version of the array in pv): later too.
    const later = segment('/arr/~c/1/', { [A.transaction]: { S: 'T2' }, [A.partners]: { M: { '/arr/': { N: '8' } } } });
    expect(asOfCommit(later, commit())).toBe(false);
  });

  it('a segment the commit did not write is as it was, unless a later record of the batch changes it', () => {
    const old = segment('/arr/~c/2/', { [A.partners]: { M: { '/arr/': { N: '3' } } } });
    expect(asOfCommit(old, commit())).toBe(true);
    expect(asOfCommit(old, commit({ changedLater: (k) => k === '/arr/~c/2/' }))).toBe(false);
  });
});
