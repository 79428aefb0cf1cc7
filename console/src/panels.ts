// The management tabs: keys (created with permissions and paths, the secret shown once), members, webhooks (with
// their dropped deliveries) and rules (an editor with the tester beside it). Each is the owner's routes, unchanged.
import { call, problem, type Session, type Json } from './api';
import { field, fill, h, parseJson, say } from './dom';

const table = (head: string[], rows: (Node | string)[][]) =>
  h(
    'table',
    {},
    h('thead', {}, h('tr', {}, ...head.map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, ...rows.map((r) => h('tr', {}, ...r.map((c) => h('td', {}, c))))),
  );
const when = (iso: unknown) => (typeof iso === 'string' ? new Date(iso).toLocaleString() : '—');

/** Deletes one listed record (`route` under the project), says so, and reads the list again. */
async function deleteThen(session: Session, route: string, done: string, refresh: () => Promise<void>): Promise<void> {
  const answer = await call(session, 'DELETE', route);
  if (answer.status >= 300) return say(problem(answer), 'error');
  say(done);
  await refresh();
}

/** A management tab: its title, the inline form that adds to it, and what follows (a secret shown once, the list). */
function panel(
  title: string,
  form: { onsubmit: (event: Event) => void; fields: HTMLElement[]; submit: string },
  ...after: HTMLElement[]
): HTMLElement {
  return h(
    'section',
    { class: 'panel' },
    h('h2', {}, title),
    h(
      'form',
      { class: 'inline', onsubmit: form.onsubmit },
      ...form.fields,
      h('button', { type: 'submit', class: 'primary' }, form.submit),
    ),
    ...after,
  );
}

/** The keys tab. */
export function keysPanel(session: Session): HTMLElement {
  const list = h('div', { 'aria-live': 'polite' });
  const secret = h('div', { class: 'secret', hidden: true });
  const name = h('input', { 'aria-label': 'Key name', placeholder: 'ci', required: true });
  const read = h('input', { type: 'checkbox', checked: true, 'aria-label': 'content:read' });
  const write = h('input', { type: 'checkbox', 'aria-label': 'content:write' });
  const paths = h('input', {
    'aria-label': 'Paths (comma-separated, empty: all)',
    placeholder: 'builds, public.status',
  });
  const expires = h('input', { type: 'number', min: '1', 'aria-label': 'Expires in seconds (empty: never)' });
  const refresh = async () => {
    const answer = await call(session, 'GET', '/keys');
    if (answer.status !== 200) return fill(list, problem(answer));
    fill(
      list,
      table(
        ['Name', 'Permissions', 'Paths', 'Created', 'Expires', ''],
        (answer.body.keys as Json[]).map((k) => [
          k.name,
          (k.permissions ?? []).join(', '),
          (k.paths ?? ['(all)']).join(', '),
          when(k.createdAt),
          when(k.expiresAt),
          h(
            'button',
            { type: 'button', class: 'danger', 'data-revoke': k.id, onclick: () => revoke(k.id, k.name) },
            `Revoke ${k.name}`,
          ),
        ]),
      ),
    );
  };
  const revoke = (id: string, label: string) =>
    deleteThen(session, `/keys/${encodeURIComponent(id)}`, `Revoked ${label}`, refresh);
  const create = async (event: Event) => {
    event.preventDefault();
    const permissions = [read.checked && 'content:read', write.checked && 'content:write'].filter(Boolean);
    const scoped = paths.value
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const body = {
      name: name.value,
      permissions,
      ...(scoped.length ? { paths: scoped } : {}),
      ...(expires.value ? { expiresInSeconds: Number(expires.value) } : {}),
    };
    const answer = await call(session, 'POST', '/keys', { body });
    if (answer.status !== 201) return say(problem(answer), 'error');
    fill(
      secret,
      h('p', {}, 'The key, shown this once: copy it now.'),
      h('code', { class: 'key-secret' }, answer.body.key),
    );
    secret.hidden = false;
    say(`Created ${answer.body.name}`);
    await refresh();
  };
  refresh();
  return panel(
    'API keys',
    {
      onsubmit: create,
      fields: [
        field('Name', name),
        field('Read', read),
        field('Write', write),
        field('Paths', paths),
        field('Expires in (s)', expires),
      ],
      submit: 'Create key',
    },
    secret,
    list,
  );
}

/** The members tab. */
export function membersPanel(session: Session): HTMLElement {
  const list = h('div', { 'aria-live': 'polite' });
  const who = h('input', { 'aria-label': 'Username', placeholder: '@bob' });
  const role = h(
    'select',
    { 'aria-label': 'Role' },
    h('option', { value: 'viewer' }, 'viewer'),
    h('option', { value: 'editor' }, 'editor'),
  );
  const refresh = async () => {
    const answer = await call(session, 'GET', '/members');
    if (answer.status !== 200) return fill(list, problem(answer));
    fill(
      list,
      h('p', {}, `Owner: ${answer.body.owner}`),
      table(
        ['Member', 'Role', ''],
        (answer.body.members as Json[]).map((m) => [
          m.username,
          m.role,
          h(
            'button',
            { type: 'button', class: 'danger', onclick: () => removeMember(m.username) },
            `Remove ${m.username}`,
          ),
        ]),
      ),
    );
  };
  const removeMember = (username: string) =>
    deleteThen(session, `/members/${encodeURIComponent(username)}`, `Removed ${username}`, refresh);
  const add = async (event: Event) => {
    event.preventDefault();
    const answer = await call(session, 'PUT', `/members/${encodeURIComponent(who.value)}`, {
      body: { role: role.value },
    });
    if (answer.status >= 300) return say(problem(answer), 'error');
    say(`${who.value} is now a ${role.value}`);
    await refresh();
  };
  refresh();
  return panel(
    'Members',
    { onsubmit: add, fields: [field('Username', who), field('Role', role)], submit: 'Add or change' },
    list,
  );
}

/** The webhooks tab. */
export function webhooksPanel(session: Session): HTMLElement {
  const list = h('div', { 'aria-live': 'polite' });
  const secret = h('div', { class: 'secret', hidden: true });
  const url = h('input', { type: 'url', 'aria-label': 'URL', placeholder: 'https://hooks.example.com/content' });
  const path = h('input', { 'aria-label': 'Path (empty: the whole content)', placeholder: 'data' });
  const refresh = async () => {
    const answer = await call(session, 'GET', '/webhooks');
    if (answer.status !== 200) return fill(list, problem(answer));
    fill(
      list,
      table(
        ['URL', 'Path', 'Dropped', 'Last dropped', ''],
        (answer.body.webhooks as Json[]).map((w) => [
          w.url,
          w.path ?? '(all)',
          String(w.dropped ?? 0),
          when(w.lastDropped),
          h('button', { type: 'button', class: 'danger', onclick: () => removeHook(w.id) }, 'Delete'),
        ]),
      ),
    );
  };
  const removeHook = (id: string) =>
    deleteThen(session, `/webhooks/${encodeURIComponent(id)}`, 'Webhook deleted', refresh);
  const add = async (event: Event) => {
    event.preventDefault();
    const body = { url: url.value, ...(path.value ? { path: path.value } : {}) };
    const answer = await call(session, 'POST', '/webhooks', { body });
    if (answer.status !== 201) return say(problem(answer), 'error');
    fill(secret, h('p', {}, 'The signing secret, shown this once:'), h('code', {}, answer.body.secret));
    secret.hidden = false;
    await refresh();
  };
  refresh();
  return panel(
    'Webhooks',
    { onsubmit: add, fields: [field('URL', url), field('Path', path)], submit: 'Add webhook' },
    secret,
    list,
  );
}

/** The rules tab: the document in an editor, saved with If-Match on its version, and the tester beside it. */
export function rulesPanel(session: Session): HTMLElement {
  // Read-only until the stored document is in: text typed before the load answered would be overwritten by it, and
  // saved without If-Match over whatever is stored.
  const editor = h('textarea', {
    rows: '18',
    spellcheck: 'false',
    'aria-label': 'Rules (JSON)',
    class: 'code',
    readonly: true,
  });
  const saveButton = h('button', { type: 'button', class: 'primary', disabled: true }, 'Save rules');
  const note = h('div', { 'aria-live': 'polite' });
  let version: number | undefined;
  const editable = (yes: boolean) => {
    editor.readOnly = !yes;
    saveButton.disabled = !yes;
  };
  const load = async () => {
    editable(false);
    const answer = await call(session, 'GET', '/rules');
    if (answer.status !== 200) return fill(note, problem(answer));
    version = answer.body.version;
    const { version: _v, ...document } = answer.body;
    editor.value = JSON.stringify(document, null, 2);
    fill(note, `Version ${version}`);
    editable(true);
  };
  const rulesDocument = () => {
    const parsed = parseJson(editor.value);
    if (parsed.error) say(parsed.error, 'error');
    return parsed.value as Record<string, unknown> | undefined;
  };
  const save = async () => {
    const document = rulesDocument();
    if (!document) return;
    const headers = version === undefined ? undefined : { 'if-match': `"${version}"` };
    const answer = await call(session, 'PUT', '/rules', { body: document, headers });
    // 202: stored and in force for every new request; warm grants catch up by `effectiveBy` (docs/design/rules.md).
    if (answer.status !== 200 && answer.status !== 202) return say(problem(answer), 'error');
    version = answer.body.version;
    const pending = answer.body.stamping?.pending ? answer.body.stamping.effectiveBy : undefined;
    fill(
      note,
      `Saved: version ${version}`,
      pending ? h('p', {}, `Every cached grant follows it by ${pending}.`) : null,
      ...(answer.body.warnings ?? []).map((w: Json) =>
        h('p', { class: 'warning' }, typeof w === 'string' ? w : JSON.stringify(w)),
      ),
    );
    say(`Rules saved (version ${version})`);
  };

  saveButton.addEventListener('click', save);

  const who = h(
    'select',
    { 'aria-label': 'Act as' },
    h('option', { value: 'anonymous' }, 'anonymous'),
    h('option', { value: 'user' }, 'a signed-in user'),
    h('option', { value: 'key' }, 'an API key'),
  );
  const auth = h(
    'textarea',
    { rows: '4', spellcheck: 'false', 'aria-label': 'Caller (JSON)', class: 'code' },
    '{"sub": "alice", "username": null, "claims": {}}',
  );
  const operation = h(
    'select',
    { 'aria-label': 'Operation' },
    h('option', { value: 'read' }, 'read'),
    h('option', { value: 'write' }, 'write'),
  );
  const path = h('input', { 'aria-label': 'Path', placeholder: 'users.alice.name' });
  const value = h('textarea', {
    rows: '3',
    spellcheck: 'false',
    'aria-label': 'Value written (JSON, for writes)',
    class: 'code',
  });
  const verdict = h('output', { class: 'verdict', 'aria-live': 'polite' });
  who.addEventListener('change', () => {
    auth.value =
      who.value === 'key'
        ? '{"kind": "key", "keyId": "k1", "permissions": ["content:read"], "paths": ["builds"]}'
        : who.value === 'user'
          ? '{"sub": "alice", "username": null, "claims": {}}'
          : '';
  });
  const test = async (event: Event) => {
    event.preventDefault();
    const document = rulesDocument();
    if (!document) return;
    let caller: unknown = null;
    if (who.value !== 'anonymous') {
      const parsed = parseJson(auth.value);
      if (parsed.error) return say(parsed.error, 'error');
      caller = who.value === 'user' ? { kind: 'user', ...(parsed.value as object) } : parsed.value;
    }
    const body: Record<string, unknown> = {
      auth: caller,
      operation: operation.value,
      path: path.value,
      rules: document.rules,
    };
    if (operation.value === 'write' && value.value.trim()) {
      const parsed = parseJson(value.value);
      if (parsed.error) return say(parsed.error, 'error');
      body.value = parsed.value;
    }
    const answer = await call(session, 'POST', '/rules/test', { body });
    if (answer.status !== 200) return fill(verdict, problem(answer));
    const r = answer.body;
    verdict.className = `verdict ${r.allowed ? 'allowed' : 'denied'}`;
    fill(
      verdict,
      `${r.allowed ? 'Allowed' : 'Denied'}${r.rule === null || r.rule === undefined ? '' : ` by rule ${r.rule}`}: ${r.reason}`,
    );
  };
  load();
  return h(
    'section',
    { class: 'panel rules' },
    h(
      'div',
      {},
      h('h2', {}, 'Rules'),
      editor,
      h('div', { class: 'actions' }, saveButton, h('button', { type: 'button', onclick: load }, 'Reload')),
      note,
    ),
    h(
      'form',
      { class: 'tester', onsubmit: test },
      h('h2', {}, 'Try the rules (unsaved too)'),
      field('Act as', who),
      field('Caller', auth),
      field('Operation', operation),
      field('Path', path),
      field('Value', value),
      h('button', { type: 'submit', class: 'primary' }, 'Test'),
      verdict,
    ),
  );
}
