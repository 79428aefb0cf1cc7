// The docs say only what the code does: the reference page's texts against the limits and swagger-ui settings they
// describe, every relative link and anchor resolving, and the counts and limits the pages state against their source.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_CONTENT_BYTES, MAX_RESPONSE_BYTES } from '../../lib/config/limits';
import { findDeadLinks, headingAnchor } from '../../scripts/check-links';
import { ERROR_CODES } from '../../lib/config/error-codes';
import { buildOpenApiDocument } from '../../lib/openapi/document';
import { INIT_JS } from '../../lib/openapi/docs-site';

const description = String(buildOpenApiDocument().info.description);

describe('the reference page (OpenAPI description) states the limits as the code enforces them', () => {
  it('names the whole-value limit as a limit on one value that stays whole, not on the content', () => {
    expect(description).not.toMatch(new RegExp(`content ${MAX_CONTENT_BYTES} bytes`));
    expect(description).toContain(`holds at most ${MAX_CONTENT_BYTES}`);
    expect(description).toMatch(/Content has no size limit of its own/);
  });

  it('gives the GET response limit from the same constant the store enforces', () => {
    expect(description).toContain(`${MAX_RESPONSE_BYTES} bytes`);
    expect(ERROR_CODES.RESPONSE_TOO_LARGE.message).toContain(String(MAX_RESPONSE_BYTES));
    expect(ERROR_CODES.CONTENT_TOO_LARGE.message).toMatch(/a value that stays whole/);
  });

  it('does not tell users to press "Try it out" while swagger-ui has it on for every operation', () => {
    expect(INIT_JS).toMatch(/tryItOutEnabled: true/);
    expect(description).not.toMatch(/Try it out/i);
  });
});

describe('every relative link and anchor in README.md and docs/**/*.md resolves (scripts/check-links.ts)', () => {
  const root = join(__dirname, '..', '..');

  it('finds no dead link in the repository', () => {
    expect(findDeadLinks(root)).toEqual([]);
  });

  it('reports a missing file, a missing heading and an anchor into a non-Markdown file, and skips code and URLs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'links-'));
    mkdirSync(join(dir, 'docs'));
    writeFileSync(
      join(dir, 'README.md'),
      [
        '# Title',
        '## The `content-api` command',
        '## Twice',
        '## Twice',
        '[ok](#the-content-api-command) [ok](#twice-1) [ok](docs/a.md#section-a) [ok](https://example.com/#x)',
        '[gone](docs/b.md) [no heading](#nowhere) [no anchor in json](package.json#x)',
        '`[in code](nowhere.md)`',
        '```',
        '[in a fence](nowhere.md)',
        '```',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'docs', 'a.md'),
      '# A\n## Section A\n[up](../README.md#title) [bad](../README.md#twice-2)\n',
    );
    writeFileSync(join(dir, 'package.json'), '{}');
    const dead = findDeadLinks(dir).map(({ file, target }) => `${file} ${target}`);
    expect(dead.sort()).toEqual(
      [
        'README.md docs/b.md',
        'README.md #nowhere',
        'README.md package.json#x',
        'docs/a.md ../README.md#twice-2',
      ].sort(),
    );
  });

  it('computes GitHub anchors: lower case, punctuation dropped, spaces to hyphens', () => {
    expect(headingAnchor('Versions, If-Match and Idempotency-Key')).toBe('versions-if-match-and-idempotency-key');
    expect(headingAnchor('Identity provider (OIDC) sessions')).toBe('identity-provider-oidc-sessions');
    expect(headingAnchor("API Gateway's own answers (deployed only)")).toBe('api-gateways-own-answers-deployed-only');
  });
});
