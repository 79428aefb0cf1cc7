// The docs say only what the code does: the reference page's texts against the limits and swagger-ui settings they
// describe.
import { MAX_CONTENT_BYTES, MAX_RESPONSE_BYTES } from '../../lib/config/limits';
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
