// The content's segments as stored, read straight from the table: for checks that no segment is left behind.
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import {
  ROOT_KEY,
  byChunkStart,
  chunkCount,
  isBucketStubKey,
  chunkDir,
  chunkStart,
  isChunkKey,
  isChunkStubKey,
} from '../../lib/storage/layout/keys';
import { stubsIn } from '../../lib/storage/layout/stubs';
import { dynamo } from '../../lib/dynamo/client';
import { A } from '../../lib/schema/attributes';
import { itemKeyAttributes, projectPk } from '../../lib/schema/items';
import type { Segment } from '../../lib/storage/segment';
import { querySubtree } from '../../lib/storage/io/read';

/** The project's incarnation: the partition its content's segments are in. */
export async function incarnationOf(p: { username: string; slug: string }): Promise<string> {
  const { Item } = await dynamo.send(
    new GetItemCommand({
      TableName: process.env.TABLE_NAME,
      Key: itemKeyAttributes(projectPk({ username: p.username, slug: p.slug })),
      ConsistentRead: true,
    }),
  );
  return Item?.[A.incarnation]?.S as string;
}

/** Every segment of the project's content. */
export async function segmentsOf(p: { username: string; slug: string }): Promise<Segment[]> {
  return [...(await querySubtree(await incarnationOf(p), ROOT_KEY)).values()];
}

/** Segments no stub leads to from the root (left behind by a change), and stubs that lead nowhere (lost content). */
export async function strays(p: {
  username: string;
  slug: string;
}): Promise<{ orphans: string[]; dangling: string[] }> {
  const segments = new Map((await segmentsOf(p)).map((s) => [s.key, s]));
  const reached = new Set<string>();
  const dangling: string[] = [];
  const visit = (key: string) => {
    if (isBucketStubKey(key)) {
      // A bucket stub stands for every one of its buckets.
      const fanout = Number(key.slice(key.lastIndexOf('#') + 1));
      for (let r = 0; r < fanout; r++) visit(`${key}/${r}/`);
      return;
    }
    if (isChunkStubKey(key)) {
      // A chunk stub stands for chunks that hold exactly its count of elements, from index 0, without gaps.
      const chunks = [...segments.keys()]
        .filter((k) => k.startsWith(chunkDir(key)) && isChunkKey(k))
        .sort(byChunkStart);
      let length = 0;
      for (const k of chunks) {
        if (chunkStart(k) !== length) dangling.push(k);
        length += (segments.get(k)!.fragment as unknown[]).length;
        reached.add(k);
      }
      if (length !== chunkCount(key)) dangling.push(key);
      return;
    }
    const segment = segments.get(key);
    if (!segment) {
      dangling.push(key);
      return;
    }
    reached.add(key);
    for (const stub of stubsIn(segment.fragment)) visit(stub);
  };
  if (segments.size > 0) visit(ROOT_KEY);
  return { orphans: [...segments.keys()].filter((k) => !reached.has(k)), dangling };
}
