// The access policy: one table of who may do what, which the compiler's condition, assertAccess and the management
// routes all use.
import { type Need, type ProjectRole, keyAllows, memberRolesFor, roleAllows, roleOf } from '../../lib/policy';

describe('roleAllows', () => {
  it.each<[ProjectRole | undefined, Need, boolean]>([
    ['owner', 'read', true],
    ['owner', 'write', true],
    ['owner', 'manage', true],
    ['editor', 'read', true],
    ['editor', 'write', true],
    ['editor', 'manage', false],
    ['viewer', 'read', true],
    ['viewer', 'write', false],
    ['viewer', 'manage', false],
    [undefined, 'read', false],
    [undefined, 'write', false],
    [undefined, 'manage', false],
  ])('%s may %s: %s', (role, need, allowed) => {
    expect(roleAllows(role, need)).toBe(allowed);
  });

  it('gives the compiler the member roles per need (all of them for read, editors for write, none to manage)', () => {
    expect([memberRolesFor('read'), memberRolesFor('write'), memberRolesFor('manage')]).toEqual([
      ['editor', 'viewer'],
      ['editor'],
      [],
    ]);
  });
});

describe('roleOf', () => {
  const project = { owner: '@ann', members: { '@bob': 'editor', '@cy': 'viewer' } };
  it.each([
    ['@ann', 'owner'],
    ['@bob', 'editor'],
    ['@cy', 'viewer'],
    ['@dee', undefined],
  ])('%s is %s', (username, role) => {
    expect(roleOf(project, username)).toBe(role);
  });
});

describe('keyAllows', () => {
  it.each<[('content:read' | 'content:write')[], 'read' | 'write', boolean]>([
    [['content:read'], 'read', true],
    [['content:read'], 'write', false],
    [['content:write'], 'read', false],
    [['content:write'], 'write', true],
    [['content:read', 'content:write'], 'write', true],
    [[], 'read', false],
  ])('%j may %s: %s', (permissions, need, allowed) => {
    expect(keyAllows(permissions, need)).toBe(allowed);
  });
});
