// site.exportPieces / site.importPieces and the CLI's export file against a scripted fetch (fault injection: lost
// answers, refusals, EXPORT_STALE): pages numbered and under their limits, a page retried with its own number, the
// commit repeated until done, the session abandoned on any failure, and only a whole export reaching its file.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { exportToFile } from '../../src/cli-backup';
import { ContentApiError, createClient, type Piece } from '../../src/index';

interface Sent {
  method: string;
  path: string;
  body?: any;
}

/** A project on a scripted fetch: `answer` decides each response (a Response, or a thrown error: no answer). */
function scripted(answer: (sent: Sent, index: number) => Response | Promise<Response>) {
  const sent: Sent[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const request: Sent = {
      method: init?.method ?? 'GET',
      path: new URL(String(input)).pathname.replace('/api/@alice/site', '') + new URL(String(input)).search,
      body: init?.body === undefined ? undefined : JSON.parse(String(init.body)),
    };
    sent.push(request);
    return answer(request, sent.length - 1);
  };
  const site = createClient({ baseUrl: 'https://api.example.com', credential: 'k', fetch, retryDelay: 1 }).project(
    '@alice/site',
  );
  return { site, sent };
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });
const pieces = (n: number, size: number): Piece[] => [
  { path: '', value: {} },
  ...Array.from({ length: n }, (_, i) => ({ path: `/k${i}`, value: 'x'.repeat(size) })),
];

describe('importPieces', () => {
  it('sends pages under pageBytes and pagePieces, numbered from 1, then commits until the 200', async () => {
    let commits = 0;
    const { site, sent } = scripted(({ method, path }) => {
      if (path === '/import') return json({ session: 's1' }, 201);
      if (path === '/import/s1/commit')
        return ++commits < 3 ? json({ copied: commits * 10 }, 202) : json({ message: 'Content imported successfully' });
      if (method === 'POST') return json({ sequence: 0, applied: true });
      return json({}, 500);
    });
    const done = await site.importPieces(pieces(50, 1000), { pageBytes: 8 * 1024, pagePieces: 5 });
    expect(done).toEqual({ message: 'Content imported successfully', etag: null });
    const pages = sent.filter((s) => s.path === '/import/s1');
    expect(pages.map((p) => p.body.sequence)).toEqual(pages.map((_, i) => i + 1));
    for (const page of pages) {
      expect(Buffer.byteLength(JSON.stringify(page.body))).toBeLessThanOrEqual(8 * 1024);
      expect(page.body.pieces.length).toBeLessThanOrEqual(5);
    }
    expect(pages.flatMap((p) => p.body.pieces)).toEqual(pieces(50, 1000));
    expect(sent.filter((s) => s.path === '/import/s1/commit')).toHaveLength(3);
    expect(sent.some((s) => s.method === 'DELETE')).toBe(false);
  });

  it('retries a page whose answer was lost with the same sequence and body', async () => {
    let lost = false;
    const { site, sent } = scripted(({ path, body }) => {
      if (path === '/import') return json({ session: 's1' }, 201);
      if (path === '/import/s1/commit') return json({ message: 'Content imported successfully' });
      if (body?.sequence === 2 && !lost) {
        lost = true;
        throw new TypeError('fetch failed: socket hang up');
      }
      return json({ sequence: body.sequence, applied: true });
    });
    await site.importPieces(pieces(30, 1000), { pageBytes: 8 * 1024 });
    const pages = sent.filter((s) => s.path === '/import/s1');
    const numbers = pages.map((p) => p.body.sequence);
    expect(numbers.slice(0, 4)).toEqual([1, 2, 2, 3]);
    expect(numbers.slice(2)).toEqual(numbers.slice(2).map((_, i) => i + 2));
    expect(pages[1]).toEqual(pages[2]);
  });

  it('sends a page cut short by the server time (202 partial) again, the same, until it is done', async () => {
    let cut = 0;
    const { site, sent } = scripted(({ path, body }) => {
      if (path === '/import') return json({ session: 's1' }, 201);
      if (path === '/import/s1/commit') return json({ message: 'Content imported successfully' });
      if (body.sequence === 1 && cut < 2) return json({ sequence: 1, partial: { done: ++cut, of: 3 } }, 202);
      return json({ sequence: body.sequence, applied: true });
    });
    await site.importPieces(pieces(30, 1000), { pageBytes: 8 * 1024 });
    const pages = sent.filter((s) => s.path === '/import/s1');
    expect(pages.slice(0, 3).map((p) => p.body)).toEqual([pages[0]?.body, pages[0]?.body, pages[0]?.body]);
    expect(pages.map((p) => p.body.sequence).slice(2)).toEqual(pages.slice(2).map((_, i) => i + 1));
  });

  it.each([
    ['a refused page', (s: Sent) => s.path === '/import/s1' && s.body.sequence === 2, 400],
    ['a refused commit', (s: Sent) => s.path === '/import/s1/commit', 412],
  ])('abandons the session (DELETE) on %s and throws the error', async (_what, refuse, status) => {
    const { site, sent } = scripted((s) => {
      if (s.path === '/import') return json({ session: 's1' }, 201);
      if (refuse(s))
        return json({ message: 'no', code: status === 400 ? 'INVALID_PIECES' : 'PRECONDITION_FAILED' }, status);
      if (s.method === 'DELETE') return json({ message: 'Import abandoned' });
      return json({ sequence: 1, applied: true });
    });
    const error = await site.importPieces(pieces(30, 1000), { pageBytes: 8 * 1024, ifMatch: '"1"' }).catch((e) => e);
    expect(error).toBeInstanceOf(ContentApiError);
    expect(error.status).toBe(status);
    expect(sent.at(-1)).toEqual({ method: 'DELETE', path: '/import/s1' });
  });

  it('abandons the session when the pieces themselves fail (a document that is not JSON)', async () => {
    const { site, sent } = scripted((s) =>
      s.path === '/import' ? json({ session: 's1' }, 201) : json({ sequence: 1, applied: true }),
    );
    async function* broken(): AsyncGenerator<Piece> {
      yield* pieces(20, 1000);
      throw new SyntaxError('unexpected end at position 99 of the JSON text');
    }
    await expect(site.importPieces(broken(), { pageBytes: 8 * 1024 })).rejects.toThrow(SyntaxError);
    expect(sent.at(-1)).toEqual({ method: 'DELETE', path: '/import/s1' });
    expect(sent.some((s) => s.path.endsWith('/commit'))).toBe(false);
  });
});

describe('exportPieces', () => {
  it('follows the cursor page after page, keeping every digit', async () => {
    const { site, sent } = scripted(({ path }) =>
      path === '/export'
        ? new Response(
            '{"revision":"7","pieces":[{"path":"","value":{}},{"path":"/n","value":123456789012345678901234567890}],"cursor":"c 1"}',
          )
        : json({ revision: '7', pieces: [{ path: '/m', value: 1 }], cursor: null }),
    );
    const got: Piece[] = [];
    for await (const piece of site.exportPieces()) got.push(piece);
    expect(JSON.stringify(got)).toBe(
      '[{"path":"","value":{}},{"path":"/n","value":123456789012345678901234567890},{"path":"/m","value":1}]',
    );
    expect(sent.map((s) => s.path)).toEqual(['/export', '/export?cursor=c%201']);
  });

  it('throws EXPORT_STALE as a ContentApiError with its code', async () => {
    const { site } = scripted(({ path }) =>
      path === '/export'
        ? json({ revision: '7', pieces: [{ path: '', value: {} }], cursor: 'c' })
        : json({ message: 'start again', code: 'EXPORT_STALE' }, 409),
    );
    const error = await (async () => {
      for await (const _ of site.exportPieces());
    })().catch((e) => e);
    expect(error).toBeInstanceOf(ContentApiError);
    expect(error).toMatchObject({ status: 409, code: 'EXPORT_STALE' });
  });
});

describe("the CLI's export file", () => {
  /** A site whose export fails with EXPORT_STALE on its second page the first `stale` times. */
  function staleSite(stale: number) {
    let runs = 0;
    return {
      runs: () => runs,
      site: {
        async *exportPieces(): AsyncGenerator<Piece> {
          runs++;
          yield { path: '', value: {} };
          yield { path: '/run', value: runs };
          if (runs <= stale) throw new ContentApiError('start again', { status: 409, code: 'EXPORT_STALE' });
          yield { path: '/done', value: true };
        },
      },
    };
  }

  it('starts again after EXPORT_STALE and writes only the whole export, renamed onto --out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'content-api-export-test-'));
    const out = join(dir, 'backup.json');
    const notes: string[] = [];
    const { site, runs } = staleSite(3);
    const summary = await exportToFile(site, { out, stdout: new PassThrough(), note: (l) => notes.push(l) });
    expect(runs()).toBe(4);
    expect(notes).toHaveLength(3);
    expect(readFileSync(out, 'utf8')).toBe('{"run":4,"done":true}\n');
    expect(JSON.parse(summary as string)).toEqual({ file: out, bytes: 22 });
    expect(readdirSync(dir)).toEqual(['backup.json']);
  });

  it('gives up after 3 restarts, leaving no file; to stdout, writes nothing of a failed export', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'content-api-export-test-'));
    const { site } = staleSite(4);
    await expect(
      exportToFile(site, { out: join(dir, 'backup.json'), stdout: new PassThrough(), note: () => {} }),
    ).rejects.toMatchObject({
      code: 'EXPORT_STALE',
    });
    expect(readdirSync(dir)).toEqual([]);

    const stdout = new PassThrough();
    let written = '';
    stdout.on('data', (c) => (written += c));
    await expect(exportToFile(staleSite(4).site, { stdout, note: () => {} })).rejects.toMatchObject({
      code: 'EXPORT_STALE',
    });
    expect(written).toBe('');
    await exportToFile(staleSite(1).site, { stdout, note: () => {} });
    expect(written).toBe('{"run":2,"done":true}\n');
  });
});
