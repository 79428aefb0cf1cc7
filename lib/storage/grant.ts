// A request's grant: the project's incarnation and grant epoch its access was proven at, verified again when a
// segment shows another epoch (a revocation).
import type { Segment } from './segment';
import { stampSegment } from './io/commit';
import { AccessProof, type Need, type Principal, readEpoch } from '../auth/access';
import type { ProjectRef } from '../schema/items';

/** What a request relies on once its access is verified: which life of the project, at which grant epoch. */
export interface Grant {
  inc: string;
  epoch: number;
  proof: AccessProof;
}

const grantOf = (proof: AccessProof): Grant => ({ inc: proof.grant.inc, epoch: proof.grant.ge, proof });

/** Verifies the caller (401, 404, 403 in the documented order; cached per warm Lambda) and returns its grant. */
export async function grantFor(project: ProjectRef, principal: Principal, need: Need): Promise<Grant> {
  return grantOf(await AccessProof.of(project, principal, need));
}

/**
 * A grant on a partition no caller's grant names (an import's shadow content): a fixed epoch and incarnation that
 * nothing revokes, so there is nothing to verify again. The caller was verified for the project before.
 */
export function partitionGrant(inc: string, epoch: number): Grant {
  const access = { ge: epoch, inc };
  const proof = {
    grant: { inc, ge: epoch, rights: ['write'], verifiedAt: 0, fresh: true },
    check: () => access,
    holdsOn: () => true,
    renew: async () => undefined,
  };
  return { inc, epoch, proof: proof as unknown as AccessProof };
}

/** The grant verified afresh: a segment showed another epoch (a revocation, or a grant remembered from before one). */
export async function verifyAgain(grant: Grant): Promise<Grant> {
  await grant.proof.renew();
  return grantOf(grant.proof);
}

/** What a write's condition checks for a grant: its epoch and incarnation. */
export const epochAccess = (grant: Grant) => grant.proof.check();

/** A segment of another epoch than the grant's: the grant verified afresh, and the segment stamped if it is older. */
export async function verifyOnEpochChange(grant: Grant, segment: Segment): Promise<Grant> {
  const fresh = await verifyAgain(grant);
  if (segment.epoch < fresh.epoch) await stampSegment(fresh.inc, segment.key, fresh.epoch);
  return fresh;
}

/**
 * Decides 401/404/403 with one read, for requests that do not prove access in a write of their own: those that fail
 * validation (401/404/403 come before 400) and named ones (Idempotency-Key), which may be answered from a record.
 * Returns the project's incarnation, so a record of a deleted project never answers for its re-creation.
 */
export async function assertProjectAccess(project: ProjectRef, principal: Principal, need: Need): Promise<string> {
  const proof = await AccessProof.of(project, principal, need);
  // A grant verified by this request is as current as the head; a remembered one is compared with it (one GetItem).
  if (!proof.grant.fresh && !proof.holdsOn(await readEpoch(project))) await proof.renew();
  return proof.grant.inc;
}
