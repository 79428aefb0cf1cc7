// The rules' engines, loaded with the first request rules concern: in the Lambda bundles this is a lazy module
// (scripts/bundle.mjs), a file of its own, so it imports packages only and a cold start rules do not concern never
// compiles CEL, protobuf or ajv.
export { CelScalar, celEnv, isCelError, parse, plan } from '@bufbuild/cel';
export { timestampFromMs } from '@bufbuild/protobuf/wkt';
export { Ajv } from 'ajv';
