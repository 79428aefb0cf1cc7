// The console's entry: sign in (an API key, a session token or a JWT; kept for this tab only unless asked), then the
// tabs. Nothing is fetched from anywhere but the API it signs in to.
import { call, problem, type Session } from './api';
import { field, fill, h, say } from './dom';
import { historyPanel } from './history';
import { subscribe } from './live';
import { keysPanel, membersPanel, rulesPanel, webhooksPanel } from './panels';
import { contentView } from './view';

const STORE_KEY = 'content-api-console';

const remembered = (): Session | undefined => {
  const text = sessionStorage.getItem(STORE_KEY) ?? localStorage.getItem(STORE_KEY);
  try {
    return text ? (JSON.parse(text) as Session) : undefined;
  } catch {
    return undefined;
  }
};

function signIn(app: HTMLElement): void {
  const last = remembered();
  const origin = h('input', { 'aria-label': 'API URL', value: last?.origin ?? location.origin });
  const project = h('input', {
    'aria-label': 'Project',
    placeholder: '@demo/site',
    value: last?.project ?? '',
    required: true,
  });
  const token = h('input', {
    type: 'password',
    'aria-label': 'Credential',
    placeholder: 'capi_…, a session token or a JWT',
    required: true,
    autocomplete: 'off',
  });
  const remember = h('input', { type: 'checkbox', 'aria-label': 'Remember on this device' });
  const submit = async (event: Event) => {
    event.preventDefault();
    const session: Session = {
      origin: origin.value.replace(/\/$/, ''),
      realtime: `${origin.value.replace(/\/$/, '').replace(/^http/, 'ws')}/realtime`,
      project: project.value.trim(),
      token: token.value.trim(),
    };
    // A key may read content without reading the project's record: try the content's top keys.
    const probe = await call(session, 'GET', '/content', { query: { shallow: 'true', limit: '1' } });
    if (probe.status === 401 || probe.status === 404 || probe.status === 0) return say(problem(probe), 'error');
    (remember.checked ? localStorage : sessionStorage).setItem(STORE_KEY, JSON.stringify(session));
    start(app, session);
  };
  fill(
    app,
    h(
      'form',
      { class: 'sign-in', onsubmit: submit },
      h('h1', {}, 'Content API console'),
      field('API URL', origin),
      field('Project', project),
      field('Credential', token),
      field('Remember on this device (otherwise this tab only)', remember),
      h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
    ),
  );
  (project.value ? token : project).focus();
}

function start(app: HTMLElement, session: Session): void {
  const live = h('span', { class: 'live', 'aria-live': 'polite' }, 'connecting…');
  const main = h('main', { id: 'main' });
  const view = contentView(session, (path) => show('History', () => historyPanel(session, path)));
  const stop = subscribe(session, {
    change: (path, change) => view.change(path, change),
    reload: () => view.reload(),
    status: (text) => (live.textContent = text),
  });
  const tabs: [string, () => HTMLElement][] = [
    ['Content', () => view.element],
    ['History', () => historyPanel(session, view.selected())],
    ['Rules', () => rulesPanel(session)],
    ['Keys', () => keysPanel(session)],
    ['Members', () => membersPanel(session)],
    ['Webhooks', () => webhooksPanel(session)],
  ];
  const buttons = tabs.map(([name, make]) =>
    h(
      'button',
      { type: 'button', role: 'tab', 'aria-selected': 'false', 'data-tab': name, onclick: () => show(name, make) },
      name,
    ),
  );
  function show(name: string, make: () => HTMLElement): void {
    for (const b of buttons) b.setAttribute('aria-selected', String(b.dataset.tab === name));
    fill(main, make());
  }
  const signOut = () => {
    stop();
    sessionStorage.removeItem(STORE_KEY);
    localStorage.removeItem(STORE_KEY);
    signIn(app);
  };
  fill(
    app,
    h(
      'header',
      {},
      h('strong', {}, session.project),
      h('nav', { role: 'tablist', 'aria-label': 'Sections' }, ...buttons),
      live,
      h('button', { type: 'button', onclick: signOut }, 'Sign out'),
    ),
    main,
  );
  show('Content', tabs[0]?.[1] as () => HTMLElement);
}

const app = document.getElementById('app') as HTMLElement;
const last = remembered();
if (last?.token) start(app, last);
else signIn(app);
