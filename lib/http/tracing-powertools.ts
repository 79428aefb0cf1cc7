// Powertools Tracer (with the X-Ray SDK), a lazy module of its own (scripts/bundle.mjs): loaded by lib/http/tracing.ts
// only where tracing is on, so a cold start without tracing neither compiles nor runs it.
export { Tracer } from '@aws-lambda-powertools/tracer';
