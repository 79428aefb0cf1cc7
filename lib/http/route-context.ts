// Route context: who is calling and which project the route names, shared by every route's handler.
import { type Need, type Principal, refuseMissingProject, resolvePrincipal } from '../auth/access';
import { parseAuthorization } from '../auth/credentials';
import { type ProjectRef, canonicalName, isProjectRef } from '../schema/items';
import type { Event } from './edge';
import { bodyText, header } from './request';
import { Unauthorized } from '../config/errors';

/** The project named by the route; a name that cannot exist is a 404 once the credential is known to be good. */
export async function projectOf(event: Event, principal: Principal, need: Need): Promise<ProjectRef> {
  const username = event.pathParameters?.username;
  const slug = event.pathParameters?.projectSlug;
  if (!isProjectRef(username, slug)) {
    await refuseMissingProject({ username: String(username), slug: String(slug) }, principal, need);
  }
  return { username: canonicalName(String(username)), slug: canonicalName(String(slug)) };
}

/** The body within its envelope (413, 415); without a credential any refusal is the 401 it always was. */
function envelope(event: Event, credentialed: boolean, checkType?: (type: string | undefined) => void): string {
  if (credentialed) return bodyText(event, checkType);
  try {
    return bodyText(event, checkType);
  } catch {
    throw new Unauthorized();
  }
}

/**
 * Resolves the caller and the project; 401 for a bad credential (no I/O) and the body envelope checks first. A
 * content request without Authorization is nobody's, which only the project's rules can allow (else the same 401).
 */
export async function beginRequest(event: Event, need: Need, checkType?: (type: string | undefined) => void) {
  const authorization = header(event, 'authorization');
  const credential = authorization === undefined ? undefined : parseAuthorization(authorization);
  const text = need === 'write' ? envelope(event, credential !== undefined, checkType) : '';
  const principal: Principal = credential === undefined ? { kind: 'anonymous' } : await resolvePrincipal(credential);
  const project = await projectOf(event, principal, need);
  return { text, principal, project };
}
