// The part of jose that lib/auth/jwt.ts uses, loaded with the first JWT. In the Lambda bundles this is a lazy module
// (scripts/bundle.mjs): a file of its own, so it must import packages only; re-exporting just these keeps it small.
export { createRemoteJWKSet, jwtVerify } from 'jose';
