// Build step: writes docs/openapi.json, the published API document, from lib/openapi (the same schemas ajv compiles).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildOpenApiDocument } from '../lib/openapi/document';
import { serializeDocument } from '../lib/openapi/serialize';

const out = join(import.meta.dirname, '..', 'docs', 'openapi.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, serializeDocument(buildOpenApiDocument()));
console.error(`wrote ${out}`);
