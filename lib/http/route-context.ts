// Route context: who is calling and which project the route names, shared by every route's handler.
import { type Need, type Principal, refuseMissingProject, resolvePrincipal } from '../auth/access';
import { parseAuthorization } from '../auth/credentials';
import { type ProjectRef, canonicalName, isProjectRef } from '../schema/items';
import type { Event } from './edge';
import { bodyText, header } from './request';

/** The project named by the route; a name that cannot exist is a 404 once the credential is known to be good. */
export async function projectOf(event: Event, principal: Principal, need: Need): Promise<ProjectRef> {
  const username = event.pathParameters?.username;
  const slug = event.pathParameters?.projectSlug;
  if (!isProjectRef(username, slug)) {
    await refuseMissingProject({ username: String(username), slug: String(slug) }, principal, need);
  }
  return { username: canonicalName(String(username)), slug: canonicalName(String(slug)) };
}

/** Resolves the caller and the project; 401 (no I/O for a missing credential) and the body envelope checks first. */
export async function beginRequest(event: Event, need: Need, checkType?: (type: string | undefined) => void) {
  const credential = parseAuthorization(header(event, 'authorization'));
  const text = need === 'write' ? bodyText(event, checkType) : '';
  const principal = await resolvePrincipal(credential);
  const project = await projectOf(event, principal, need);
  return { text, principal, project };
}
