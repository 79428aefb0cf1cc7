// The history tab: who changed a path, when and how, the value as it was after Json change beside today's, and a
// restore, which is an ordinary write of its own (so it can be undone the same way).
import { formatPath } from '../../lib/paths';
import { call, problem, type Session, type Json } from './api';
import { fill, h, say } from './dom';

const actorText = (actor: Json): string =>
  actor?.kind === 'key'
    ? `key ${actor.id}`
    : actor?.kind === 'user'
      ? `${actor.username ?? actor.sub ?? 'user'}`
      : 'anonymous';

const changeText = (change: Json): string =>
  `${change.path || '(root)'} ${change.deleted ? 'deleted' : `= ${JSON.stringify(change.value)?.slice(0, 120)}`}`;

/** The history of `path`, newest first, a page at a time. */
export function historyPanel(session: Session, path: string[]): HTMLElement {
  const shown = path.length ? formatPath(path) : '(the whole content)';
  const list = h('div', { 'aria-live': 'polite' });
  const compare = h('div', { class: 'compare', hidden: true });
  const query = (extra: Record<string, string | undefined>) => ({
    path: path.length ? formatPath(path) : undefined,
    ...extra,
  });
  let before: string | null | undefined;

  const page = async () => {
    const answer = await call(session, 'GET', '/content/history', {
      query: query({ limit: '20', before: before ?? undefined }),
    });
    if (answer.status === 404 && answer.body?.code === 'ROUTE_NOT_FOUND')
      return fill(list, 'This server keeps no history.');
    if (answer.status !== 200) return fill(list, problem(answer));
    before = answer.body.next;
    const rows = (answer.body.entries as Json[]).map((e) =>
      h(
        'tr',
        { 'data-revision': e.revision },
        h('td', {}, new Date(e.at).toLocaleString()),
        h('td', {}, actorText(e.actor)),
        h('td', {}, e.operation),
        h('td', {}, h('ul', {}, ...(e.changes as Json[]).map((c) => h('li', {}, changeText(c))))),
        h(
          'td',
          {},
          h('button', { type: 'button', onclick: () => show(e.revision) }, 'Compare'),
          h('button', { type: 'button', class: 'danger', onclick: () => restore(e.revision) }, 'Restore'),
        ),
      ),
    );
    const body = list.querySelector('tbody');
    if (body) body.append(...rows);
    else
      fill(
        list,
        h(
          'table',
          {},
          h(
            'thead',
            {},
            h('tr', {}, ...['When', 'Who', 'Operation', 'Changes', ''].map((t) => h('th', { scope: 'col' }, t))),
          ),
          h('tbody', {}, ...rows),
        ),
      );
    moreButton.hidden = !before;
  };
  const read = async (at?: string) => {
    const answer = await call(session, 'GET', '/content', { query: query({ at }) });
    return answer.status === 200
      ? JSON.stringify(answer.body.value, null, 2)
      : answer.status === 404
        ? '(absent)'
        : problem(answer);
  };
  const show = async (revision: string) => {
    const [then, now] = await Promise.all([read(revision), read()]);
    fill(
      compare,
      h('div', {}, h('h3', {}, `After revision ${revision}`), h('pre', {}, then)),
      h('div', {}, h('h3', {}, 'Now'), h('pre', {}, now)),
    );
    compare.hidden = false;
  };
  const restore = async (revision: string) => {
    const answer = await call(session, 'POST', '/content/restore', {
      body: { ...(path.length ? { path: formatPath(path) } : {}), at: revision },
    });
    if (answer.status !== 200) return say(problem(answer), 'error');
    say(`Restored ${shown} as it was after revision ${revision}`);
    before = undefined;
    fill(list);
    await page();
  };
  const moreButton = h('button', { type: 'button', hidden: true, onclick: page }, 'Older changes');
  page();
  return h('section', { class: 'panel' }, h('h2', {}, `History of ${shown}`), compare, list, moreButton);
}
