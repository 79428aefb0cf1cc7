// The content tree: loaded lazily (a whole value when it fits in one answer, else shallow key pages and array
// slices), shown as a virtualized list of rows (only the rows in view are in the DOM, so a node has no size limit),
// and changed in place by realtime changes.
import { formatPath } from '../../lib/paths';
import { type Session, call, type Json } from './api';

/** What a row stands for: a value of a known kind, a value not read yet, or the "more keys" marker of a page. */
export type Kind = 'object' | 'array' | 'scalar' | 'unknown' | 'more';

/** One node of the tree as far as it is loaded. */
export interface TreeNode {
  path: string[];
  kind: Kind;
  /** A scalar's value. */
  value?: unknown;
  /** A container's whole value, when one answer held it (its children are built from it without a request). */
  whole?: unknown;
  /** An array's length, an object's key count when whole. */
  size?: number;
  expanded: boolean;
  children?: TreeNode[];
  /** Paging: an object's next key cursor, an array's next start index; null when all are loaded. */
  next?: string | number | null;
  loading?: boolean;
  parent?: TreeNode;
  /** When a realtime change last touched it (ms), for the highlight. */
  changedAt?: number;
  error?: string;
}

const PAGE_KEYS = 1000;
const byKey = new Intl.Collator('en', { numeric: true });
const PAGE_ELEMENTS = 100;

/** A node built from a value the console holds whole. */
export function fromValue(path: string[], value: unknown, parent?: TreeNode): TreeNode {
  if (Array.isArray(value)) return { path, kind: 'array', whole: value, size: value.length, expanded: false, parent };
  if (value !== null && typeof value === 'object')
    return { path, kind: 'object', whole: value, size: Object.keys(value).length, expanded: false, parent };
  return { path, kind: 'scalar', value, expanded: false, parent };
}

/** The children of a container held whole. */
function childrenOfWhole(node: TreeNode): TreeNode[] {
  const whole = node.whole as Json;
  if (Array.isArray(whole)) return whole.map((v, i) => fromValue([...node.path, String(i)], v, node));
  // Sorted for people (numbers in keys by value); an object read in pages keeps the API's order.
  const keys = Object.keys(whole).sort(byKey.compare);
  return keys.map((k) => fromValue([...node.path, k], whole[k], node));
}

const pathQuery = (path: string[]) => (path.length === 0 ? undefined : formatPath(path));

/** Reads a node's value whole, or learns its kind and first page when it is too large for one answer. */
export async function load(session: Session, node: TreeNode): Promise<void> {
  node.loading = true;
  node.error = undefined;
  try {
    const whole = await call(session, 'GET', '/content', { query: { path: pathQuery(node.path) } });
    if (whole.status === 200) {
      const fresh = fromValue(node.path, whole.body.value, node.parent);
      Object.assign(node, { ...fresh, expanded: node.expanded, children: undefined, next: undefined });
      if (node.expanded && node.kind !== 'scalar') node.children = childrenOfWhole(node);
      return;
    }
    if (whole.status === 404 && node.parent) {
      detach(node);
      return;
    }
    if (whole.status !== 413) {
      node.error = `${whole.status} ${whole.body?.code ?? ''}`;
      return;
    }
    // Too large for one answer: page it.
    const shallow = await call(session, 'GET', '/content', {
      query: { path: pathQuery(node.path), shallow: 'true', limit: '1' },
    });
    if (shallow.status === 200) {
      node.kind = 'object';
      node.whole = undefined;
      node.children = [];
      node.next = '';
    } else {
      const length = await call(session, 'GET', '/content', { query: { path: pathQuery(node.path), shallow: 'true' } });
      node.kind = 'array';
      node.whole = undefined;
      node.size = Number(length.body?.value?.length ?? 0);
      node.children = [];
      node.next = 0;
    }
    if (node.expanded) await more(session, node);
  } finally {
    node.loading = false;
  }
}

/** Loads the next page of a paged container's children. */
export async function more(session: Session, node: TreeNode): Promise<void> {
  if (node.next === null || node.next === undefined || node.loading === true) return;
  node.loading = true;
  try {
    const path = pathQuery(node.path);
    if (node.kind === 'object') {
      const query = {
        path,
        shallow: 'true',
        limit: String(PAGE_KEYS),
        after: node.next === '' ? undefined : String(node.next),
      };
      const page = await call(session, 'GET', '/content', { query });
      if (page.status !== 200) {
        node.error = `${page.status} ${page.body?.code ?? ''}`;
        return;
      }
      const have = new Set((node.children ?? []).map((c) => c.path[c.path.length - 1]));
      for (const key of Object.keys(page.body.value ?? {}))
        if (!have.has(key))
          (node.children ??= []).push({ path: [...node.path, key], kind: 'unknown', expanded: false, parent: node });
      node.next = page.body.next ?? null;
    } else {
      const start = Number(node.next);
      const page = await call(session, 'GET', '/content', {
        query: { path, start: String(start), limit: String(PAGE_ELEMENTS) },
      });
      if (page.status !== 200) {
        node.error = `${page.status} ${page.body?.code ?? ''}`;
        return;
      }
      const values = page.body.value as unknown[];
      node.size = page.body.length;
      node.children ??= [];
      for (const [i, v] of values.entries()) node.children.push(fromValue([...node.path, String(start + i)], v, node));
      const end = start + values.length;
      node.next = end < Number(node.size) && values.length > 0 ? end : null;
    }
  } finally {
    node.loading = false;
  }
}

/** Expands (loading what it needs) or collapses a container. */
export async function toggle(session: Session, node: TreeNode): Promise<void> {
  if (node.kind === 'scalar' || node.kind === 'more') return;
  node.expanded = !node.expanded;
  if (!node.expanded) return;
  if (node.whole !== undefined) node.children ??= childrenOfWhole(node);
  else if (node.children === undefined || node.kind === 'unknown') await load(session, node);
  else if (node.children.length === 0) await more(session, node);
}

/** Removes a node from its parent's loaded children. */
function detach(node: TreeNode): void {
  const siblings = node.parent?.children;
  if (siblings) siblings.splice(siblings.indexOf(node), 1);
}

/** A visible row: a node and its depth. */
export interface Row {
  node: TreeNode;
  depth: number;
}

/** The rows of the expanded tree, in order, with a "more" row after a container whose pages are not all loaded. */
export function flatten(root: TreeNode): Row[] {
  const rows: Row[] = [];
  const walk = (node: TreeNode, depth: number) => {
    rows.push({ node, depth });
    if (!node.expanded || !node.children) return;
    for (const child of node.children) walk(child, depth + 1);
    if (node.next !== null && node.next !== undefined && node.whole === undefined)
      rows.push({ node: { path: node.path, kind: 'more', expanded: false, parent: node }, depth: depth + 1 });
  };
  walk(root, 0);
  return rows;
}

/** The loaded node at a path, or the deepest loaded node above it (and whether it is the path itself). */
export function locate(root: TreeNode, path: string[]): { node: TreeNode; exact: boolean } {
  let node = root;
  for (let i = 0; i < path.length; i++) {
    const child = node.children?.find((c) => c.path[i] === path[i]);
    if (!child) return { node, exact: false };
    node = child;
  }
  return { node, exact: true };
}

/** A short text for a row's value. */
export function preview(node: TreeNode): string {
  switch (node.kind) {
    case 'scalar':
      return JSON.stringify(node.value);
    case 'object':
      return node.size === undefined || node.whole === undefined ? '{…}' : `{${node.size}}`;
    case 'array':
      return `[${node.size ?? '…'}]`;
    case 'more':
      return 'more…';
    default:
      return '…';
  }
}

/**
 * Applies one realtime change: a scalar replaced in place; otherwise the nearest loaded node at or above the path is
 * read again (keeping what was expanded). Returns the node to highlight.
 */
export async function applyChange(
  session: Session,
  root: TreeNode,
  path: string[],
  change: { value?: unknown; deleted?: boolean },
): Promise<TreeNode> {
  const { node, exact } = locate(root, path);
  const now = Date.now();
  if (exact && change.deleted && node.parent) {
    detach(node);
    node.parent.changedAt = now;
    if (node.parent.whole !== undefined) node.parent.size = (node.parent.size ?? 1) - 1;
    return node.parent;
  }
  if (
    exact &&
    !change.deleted &&
    (change.value === null || typeof change.value !== 'object') &&
    node.kind === 'scalar'
  ) {
    node.value = change.value;
    node.changedAt = now;
    return node;
  }
  if (exact && !change.deleted) {
    const expanded = node.expanded;
    Object.assign(node, fromValue(node.path, change.value, node.parent), {
      expanded,
      children: undefined,
      next: undefined,
    });
    if (expanded && node.kind !== 'scalar') node.children = childrenOfWhole(node);
    node.changedAt = now;
    return node;
  }
  // Under a node that is loaded only in part (or a new member of it): read it again, keeping what was open.
  const open = new Set<string>();
  const remember = (n: TreeNode) => {
    if (n.expanded) open.add(formatPath(n.path));
    for (const c of n.children ?? []) remember(c);
  };
  remember(node);
  await load(session, node);
  const reopen = async (n: TreeNode) => {
    for (const c of n.children ?? [])
      if (open.has(formatPath(c.path)) && !c.expanded) {
        await toggle(session, c);
        await reopen(c);
      }
  };
  await reopen(node);
  const touched = locate(root, path);
  touched.node.changedAt = now;
  return touched.node;
}
