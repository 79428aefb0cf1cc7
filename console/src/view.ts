// The content tab: the virtualized tree, the toolbar acting on the selected row, and the forms of each action. Every
// action is one ordinary API call; an edit carries If-Match and shows both values when someone else changed it.
import { formatPath, parsePath } from '../../lib/paths';
import { type Answer, call, problem, type Session } from './api';
import { fill, h, parseJson, say } from './dom';
import { applyChange, flatten, load, locate, more, preview, type Row, type TreeNode, toggle } from './tree';

const ROW_PX = 28;
const HIGHLIGHT_MS = 2500;
/** Rows read at once when they come into view without their value. */
const READ_AHEAD = 4;

/** The content tab's state and its elements. */
export interface ContentView {
  element: HTMLElement;
  /** Applies a realtime change. */
  change(path: string, change: { value?: unknown; deleted?: boolean }): void;
  /** Reads every loaded part again. */
  reload(): Promise<void>;
  /** The selected node's path (dot syntax). */
  selected(): string[];
}

/** Builds the content tab for a session; `onHistory` opens the history of a path. */
export function contentView(session: Session, onHistory: (path: string[]) => void): ContentView {
  const root: TreeNode = { path: [], kind: 'unknown', expanded: true };
  let rows: Row[] = [];
  let selected = 0;
  let busy = 0;

  const spacer = h('div', { class: 'spacer' });
  const tree = h('div', { class: 'tree', role: 'tree', tabindex: '0', 'aria-label': 'Content' }, spacer);
  const where = h('code', { class: 'where', 'aria-live': 'polite' });
  const form = h('div', { class: 'form', hidden: true });
  const button = (label: string, onclick: () => void, title?: string) =>
    h('button', { type: 'button', onclick, title, 'data-action': label.toLowerCase() }, label);
  const toolbar = h(
    'div',
    { class: 'toolbar', role: 'toolbar', 'aria-label': 'Actions on the selected value' },
    where,
    button('Copy path', () => copyPath()),
    button('Edit', () => edit()),
    button('Add', () => add()),
    button('Push', () => push()),
    button('Increment', () => increment()),
    button('Delete', () => remove()),
    button('History', () => onHistory(current().path)),
    button('Export', () => exportValue()),
    button('Import', () => importValue()),
  );
  const element = h('section', { class: 'content-view' }, toolbar, form, tree);

  const current = (): TreeNode => {
    const node = rows[selected]?.node ?? root;
    return node.kind === 'more' ? (node.parent ?? root) : node;
  };
  const shown = (path: string[]) => (path.length === 0 ? '(the whole content)' : formatPath(path));

  function render(): void {
    rows = flatten(root);
    if (selected >= rows.length) selected = rows.length - 1;
    spacer.style.height = `${rows.length * ROW_PX}px`;
    const first = Math.max(0, Math.floor(tree.scrollTop / ROW_PX) - 5);
    const last = Math.min(rows.length, Math.ceil((tree.scrollTop + tree.clientHeight) / ROW_PX) + 5);
    const now = Date.now();
    const visible: HTMLElement[] = [];
    const unread: TreeNode[] = [];
    for (let i = first; i < last; i++) {
      const { node, depth } = rows[i] as Row;
      if (node.kind === 'unknown' && !node.loading) unread.push(node);
      if (node.kind === 'more' && node.parent && !node.parent.loading) unread.push(node);
      const container = node.kind === 'object' || node.kind === 'array' || node.kind === 'unknown';
      const key = node.path.length === 0 ? '(root)' : (node.path[node.path.length - 1] as string);
      visible.push(
        h(
          'div',
          {
            class: `row${i === selected ? ' selected' : ''}${node.changedAt && now - node.changedAt < HIGHLIGHT_MS ? ' changed' : ''}`,
            role: 'treeitem',
            id: `row-${i}`,
            'aria-level': String(depth + 1),
            'aria-selected': i === selected ? 'true' : 'false',
            'aria-expanded': container ? String(node.expanded) : undefined,
            'data-path': node.kind === 'more' ? undefined : formatPath(node.path),
            style: { top: `${i * ROW_PX}px`, paddingLeft: `${depth * 18 + 6}px` },
            'data-index': String(i),
          },
          h('span', { class: 'twisty', 'aria-hidden': 'true' }, container ? (node.expanded ? '▾' : '▸') : ' '),
          node.kind === 'more' ? null : h('span', { class: 'key' }, key),
          h('span', { class: `value ${node.kind}` }, preview(node)),
          node.error ? h('span', { class: 'error' }, node.error) : null,
        ),
      );
    }
    fill(spacer, ...visible);
    tree.setAttribute('aria-activedescendant', `row-${selected}`);
    where.textContent = shown(current().path);
    readVisible(unread);
  }

  async function readVisible(nodes: TreeNode[]): Promise<void> {
    const batch = nodes.slice(0, READ_AHEAD);
    if (batch.length === 0) return;
    await Promise.all(batch.map((n) => (n.kind === 'more' && n.parent ? more(session, n.parent) : load(session, n))));
    render();
  }

  async function open(node: TreeNode): Promise<void> {
    busy++;
    await toggle(session, node);
    busy--;
    render();
  }

  function select(index: number, focus = false): void {
    selected = Math.max(0, Math.min(rows.length - 1, index));
    const top = selected * ROW_PX;
    if (top < tree.scrollTop) tree.scrollTop = top;
    else if (top + ROW_PX > tree.scrollTop + tree.clientHeight) tree.scrollTop = top + ROW_PX - tree.clientHeight;
    if (focus) tree.focus();
    render();
  }

  // Rows are rebuilt on every render, so clicks are handled here, by the row under the pointer: a click on the
  // twisty opens or closes, a click elsewhere selects, a double click opens a container or edits a value.
  const rowAt = (event: MouseEvent): number | undefined => {
    const hit = document.elementFromPoint(event.clientX, event.clientY)?.closest('.row') as HTMLElement | null;
    return hit?.dataset.index === undefined ? undefined : Number(hit.dataset.index);
  };
  tree.addEventListener('click', (event) => {
    const index = rowAt(event);
    if (index === undefined) return;
    const node = rows[index]?.node;
    if ((event.target as HTMLElement).classList.contains('twisty') && node) {
      selected = index;
      open(node);
    } else select(index, true);
  });
  tree.addEventListener('dblclick', (event) => {
    const index = rowAt(event);
    const node = index === undefined ? undefined : rows[index]?.node;
    if (node) node.kind === 'scalar' ? edit() : open(node);
  });
  tree.addEventListener('scroll', () => render());
  tree.addEventListener('keydown', (event) => {
    const node = rows[selected]?.node;
    const page = Math.floor(tree.clientHeight / ROW_PX);
    const moves: Record<string, () => void> = {
      ArrowDown: () => select(selected + 1),
      ArrowUp: () => select(selected - 1),
      Home: () => select(0),
      End: () => select(rows.length - 1),
      PageDown: () => select(selected + page),
      PageUp: () => select(selected - page),
      ArrowRight: () => (node && !node.expanded && node.kind !== 'scalar' ? open(node) : select(selected + 1)),
      ArrowLeft: () =>
        node?.expanded ? open(node) : node?.parent && select(rows.findIndex((r) => r.node === node.parent)),
      Enter: () => (node?.kind === 'scalar' ? edit() : node && open(node)),
    };
    const move = moves[event.key];
    if (move) move();
    const handled = move !== undefined;
    if (handled) event.preventDefault();
  });

  const closeForm = () => {
    form.hidden = true;
    fill(form);
    tree.focus();
  };
  const showForm = (title: string, ...children: (Node | null)[]) => {
    fill(form, h('h2', {}, title), ...children);
    form.hidden = false;
    (form.querySelector('textarea, input') as HTMLElement | null)?.focus();
  };
  const actions = (...buttons: HTMLElement[]) =>
    h('div', { class: 'actions' }, ...buttons, h('button', { type: 'button', onclick: closeForm }, 'Cancel'));
  const settle = async (answer: Answer, done: string): Promise<boolean> => {
    if (answer.status === 200) {
      say(done);
      closeForm();
      return true;
    }
    say(problem(answer), 'error');
    return false;
  };
  const write = (route: string, body: unknown, headers?: Record<string, string>) =>
    call(session, 'POST', `/content/${route}`, { body, headers });

  function copyPath(): void {
    const text = formatPath(current().path);
    navigator.clipboard?.writeText(text).then(
      () => say(`Copied ${text}`),
      () => say(`Path: ${text}`),
    );
  }

  async function edit(): Promise<void> {
    const path = current().path;
    const read = await call(session, 'GET', '/content', {
      query: { path: path.length ? formatPath(path) : undefined },
    });
    if (read.status !== 200) return say(problem(read), 'error');
    const text = h('textarea', { rows: '8', 'aria-label': 'Value (JSON)', spellcheck: 'false' });
    text.value = JSON.stringify(read.body.value, null, 2);
    const save = async (ifMatch: string | null) => {
      const parsed = parseJson(text.value);
      if (parsed.error) return say(parsed.error, 'error');
      const headers = ifMatch ? { 'if-match': ifMatch } : undefined;
      const answer =
        path.length === 0
          ? await write('update', { content: parsed.value }, headers)
          : await write('set', { path: formatPath(path), value: parsed.value }, headers);
      if (answer.status === 412) return conflict(path, parsed.value, save);
      if (await settle(answer, `Saved ${shown(path)}`)) await refresh(path);
    };
    showForm(
      `Edit ${shown(path)}`,
      text,
      actions(h('button', { type: 'button', class: 'primary', onclick: () => save(read.etag) }, 'Save')),
    );
  }

  /** Someone changed the value since it was read: show both and let the person choose. */
  async function conflict(
    path: string[],
    mine: unknown,
    save: (ifMatch: string | null) => Promise<void>,
  ): Promise<void> {
    const theirs = await call(session, 'GET', '/content', {
      query: { path: path.length ? formatPath(path) : undefined },
    });
    const pre = (value: unknown) => h('pre', {}, value === undefined ? '(deleted)' : JSON.stringify(value, null, 2));
    say(`${shown(path)} was changed by someone else`, 'error');
    showForm(
      `Conflict at ${shown(path)}`,
      h(
        'div',
        { class: 'conflict', role: 'group', 'aria-label': 'Both values' },
        h('div', {}, h('h3', {}, 'Theirs (stored now)'), pre(theirs.body?.value)),
        h('div', {}, h('h3', {}, 'Yours'), pre(mine)),
      ),
      actions(
        h('button', { type: 'button', class: 'primary', onclick: () => save(theirs.etag) }, 'Overwrite with mine'),
        h(
          'button',
          {
            type: 'button',
            onclick: async () => {
              closeForm();
              await refresh(path);
            },
          },
          'Keep theirs',
        ),
      ),
    );
  }

  function add(): void {
    const node = current();
    if (node.kind !== 'object') {
      say('Add works on an object: select one', 'error');
      return;
    }
    const key = h('input', { 'aria-label': 'Key', placeholder: 'key' });
    const text = h('textarea', { rows: '3', 'aria-label': 'Value (JSON)', spellcheck: 'false' }, '""');
    const save = async () => {
      const parsed = parseJson(text.value);
      if (parsed.error) return say(parsed.error, 'error');
      const path = [...node.path, key.value];
      const answer = await write('set', { path: formatPath(path), value: parsed.value });
      if (await settle(answer, `Added ${formatPath(path)}`)) await refresh(node.path);
    };
    showForm(
      `Add to ${shown(node.path)}`,
      key,
      text,
      actions(h('button', { type: 'button', class: 'primary', onclick: save }, 'Add')),
    );
  }

  function push(): void {
    const node = current();
    if (node.kind !== 'array') {
      say('Push works on an array: select one', 'error');
      return;
    }
    const text = h('textarea', { rows: '3', 'aria-label': 'Value (JSON)', spellcheck: 'false' }, '""');
    const save = async () => {
      const parsed = parseJson(text.value);
      if (parsed.error) return say(parsed.error, 'error');
      const answer = await write('push', { path: formatPath(node.path), value: parsed.value });
      if (await settle(answer, `Pushed to ${formatPath(node.path)}`)) await refresh(node.path);
    };
    showForm(
      `Push to ${shown(node.path)}`,
      text,
      actions(h('button', { type: 'button', class: 'primary', onclick: save }, 'Push')),
    );
  }

  function increment(): void {
    const node = current();
    if (node.kind !== 'scalar' || typeof node.value !== 'number') {
      say('Increment works on a number: select one', 'error');
      return;
    }
    const amount = h('input', { type: 'number', value: '1', 'aria-label': 'By how much (negative decrements)' });
    const save = async () => {
      const by = Number(amount.value);
      const answer = await write('increment', { path: formatPath(node.path), value: by });
      if (await settle(answer, `Incremented ${formatPath(node.path)} by ${by}`)) await refresh(node.path);
    };
    showForm(
      `Increment ${shown(node.path)}`,
      amount,
      actions(h('button', { type: 'button', class: 'primary', onclick: save }, 'Increment')),
    );
  }

  function remove(): void {
    const node = current();
    if (node.path.length === 0) {
      say('The whole content cannot be deleted: edit it instead', 'error');
      return;
    }
    const save = async () => {
      const answer = await write('delete', { path: formatPath(node.path) });
      if (await settle(answer, `Deleted ${formatPath(node.path)}`)) await refresh(node.path.slice(0, -1));
    };
    showForm(
      `Delete ${shown(node.path)}?`,
      actions(h('button', { type: 'button', class: 'danger', onclick: save }, 'Delete')),
    );
  }

  async function exportValue(): Promise<void> {
    const path = current().path;
    const read = await call(session, 'GET', '/content', {
      query: { path: path.length ? formatPath(path) : undefined },
    });
    if (read.status !== 200) return say(problem(read), 'error');
    const link = h('a', {
      href: URL.createObjectURL(new Blob([JSON.stringify(read.body.value, null, 2)], { type: 'application/json' })),
      download: `${path.length ? formatPath(path) : 'content'}.json`,
    });
    link.click();
    say(`Exported ${shown(path)}`);
  }

  function importValue(): void {
    const path = current().path;
    const file = h('input', { type: 'file', accept: 'application/json,.json', 'aria-label': 'JSON file' });
    const save = async () => {
      const chosen = file.files?.[0];
      if (!chosen) return say('Choose a JSON file', 'error');
      const parsed = parseJson(await chosen.text());
      if (parsed.error) return say(parsed.error, 'error');
      const answer =
        path.length === 0
          ? await write('update', { content: parsed.value })
          : await write('set', { path: formatPath(path), value: parsed.value });
      if (await settle(answer, `Imported ${chosen.name} into ${shown(path)}`)) await refresh(path);
    };
    showForm(
      `Import a JSON file into ${shown(path)} (it replaces the value there)`,
      file,
      actions(h('button', { type: 'button', class: 'primary', onclick: save }, 'Import')),
    );
  }

  /** Reads a path again after the console itself wrote it (realtime would too, a moment later). */
  async function refresh(path: string[]): Promise<void> {
    const read = await call(session, 'GET', '/content', {
      query: { path: path.length ? formatPath(path) : undefined },
    });
    if (read.status === 200) await applyChange(session, root, path, { value: read.body.value });
    else if (read.status === 404) await applyChange(session, root, path, { deleted: true });
    else await load(session, locate(root, path).node);
    render();
  }

  // Changes arrive one after another; each is applied after the one before it.
  let queue = Promise.resolve();
  const change = (path: string, c: { value?: unknown; deleted?: boolean }) => {
    queue = queue.then(async () => {
      let steps: string[];
      try {
        steps = path === '' ? [] : [...parsePath(path)];
      } catch {
        return;
      }
      await applyChange(session, root, steps, c);
      render();
      setTimeout(render, HIGHLIGHT_MS + 50);
    });
  };
  const reload = async () => {
    await load(session, root);
    render();
  };
  load(session, root).then(render);
  new ResizeObserver(() => render()).observe(tree);
  return {
    element,
    change,
    reload,
    selected: () => current().path,
    get busy() {
      return busy;
    },
  } as ContentView;
}
