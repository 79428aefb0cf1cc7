// A small DOM helper: elements from a tag, attributes and children, never from HTML strings (nothing the API returns
// is ever parsed as markup).

type Child = Node | string | null | undefined | false;

/** Creates an element with attributes (`on*` functions become listeners) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, unknown> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false || value === null) continue;
    if (name.startsWith('on') && typeof value === 'function')
      element.addEventListener(name.slice(2), value as EventListener);
    else if (name === 'value') (element as HTMLInputElement).value = String(value);
    // Through the CSSOM: the page's CSP refuses style attributes written as text.
    else if (name === 'style') Object.assign(element.style, value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) element.append(child);
  return element;
}

/** Replaces an element's children. */
export function fill(element: Element, ...children: Child[]): void {
  element.replaceChildren(...children.filter((c): c is Node | string => c !== null && c !== undefined && c !== false));
}

/** A labelled form field. */
export function field(label: string, control: HTMLElement): HTMLLabelElement {
  return h('label', { class: 'field' }, h('span', {}, label), control);
}

/** Parses JSON typed by a person, or says what is wrong with it. */
export function parseJson(text: string): { value?: unknown; error?: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { error: `Not JSON: ${(error as Error).message}` };
  }
}

/** An announcement for screen readers and eyes: the status line. */
export function say(text: string, kind: 'ok' | 'error' = 'ok'): void {
  const status = document.getElementById('status');
  if (!status) return;
  status.textContent = text;
  status.className = kind;
}
