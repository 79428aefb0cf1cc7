// Access policy: which role may do what, and what an API key's permissions allow. Pure; the compiler's condition,
// the store's access decision and the management routes all ask it, so the rule is written once.
import type { Permission } from '../schema/attributes';
import type { Role } from '../schema/items';

/** A caller's standing in a project: its owner, or a member with a role. */
export type ProjectRole = 'owner' | Role;
/** What content requests need. */
export type ContentNeed = 'read' | 'write';
/** What a request needs: the content's, or managing the project (keys, members, deletion). */
export type Need = ContentNeed | 'manage';

/** The roles that may do each thing; the owner may do everything. */
const ROLES_FOR: Record<Need, readonly ProjectRole[]> = {
  read: ['owner', 'editor', 'viewer'],
  write: ['owner', 'editor'],
  manage: ['owner'],
};

/** Every role a member can have. */
export const MEMBER_ROLES: readonly Role[] = ['editor', 'viewer'];

/** Whether a role may do `need` (without a role, nothing is allowed). */
export const roleAllows = (role: ProjectRole | undefined, need: Need): boolean =>
  role !== undefined && ROLES_FOR[need].includes(role);

/** The member roles that may do `need` (the owner is allowed anything). */
export const memberRolesFor = (need: Need): Role[] => MEMBER_ROLES.filter((role) => roleAllows(role, need));

/** A user's role in a project: owner, a member's role, or undefined for anyone else. */
export const roleOf = (
  project: { owner?: string; members: Record<string, string> },
  username: string,
): ProjectRole | undefined => (project.owner === username ? 'owner' : (project.members[username] as Role | undefined));

/** The permission an API key needs for a content request (keys never manage). */
export const permissionFor = (need: ContentNeed): Permission => (need === 'read' ? 'content:read' : 'content:write');

/** Whether an API key's permissions allow a content request's need. */
export const keyAllows = (permissions: readonly Permission[], need: ContentNeed): boolean =>
  permissions.includes(permissionFor(need));
