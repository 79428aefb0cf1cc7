// The console's one door to the API: every call is an ordinary request with the signed-in credential.

/** Who is signed in, to which project, on which server. */
export interface Session {
  /** The API's origin, e.g. http://127.0.0.1:3000 (the console's own origin by default). */
  origin: string;
  /** The realtime WebSocket URL (ws://host/realtime locally; the WebSocket API's URL in AWS). */
  realtime: string;
  /** `@user/slug` */
  project: string;
  /** An API key, a session token or a JWT. */
  token: string;
}

/** A JSON answer, read field by field where it is used (each field checked there, never trusted as a type). */
// biome-ignore lint/suspicious/noExplicitAny: answers are JSON of many shapes, read one field at a time
export type Json = any;

/** One answer: status, parsed JSON body (or undefined), and the ETag header. */
export interface Answer {
  status: number;
  body: Json;
  etag: string | null;
}

/** Options of one call. */
export interface CallOptions {
  body?: unknown;
  query?: Record<string, string | undefined>;
  headers?: Record<string, string>;
}

/** Calls `route` under the project (`/content/set`, `/keys`, `''`) and never throws on an HTTP status. */
export async function call(
  session: Session,
  method: string,
  route: string,
  options: CallOptions = {},
): Promise<Answer> {
  const url = new URL(`/api/${session.project}${route}`, session.origin);
  for (const [name, value] of Object.entries(options.query ?? {}))
    if (value !== undefined) url.searchParams.set(name, value);
  const headers: Record<string, string> = { authorization: `Bearer ${session.token}`, ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  try {
    const response = await fetch(url, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.text();
    let body: Json;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = { message: text };
    }
    return { status: response.status, body, etag: response.headers.get('etag') };
  } catch (error) {
    return { status: 0, body: { message: `The API did not answer: ${String(error)}`, code: 'NETWORK' }, etag: null };
  }
}

/** The message to show for a refused call. */
export const problem = (answer: Answer): string =>
  `${answer.status || 'network'} ${answer.body?.code ?? ''}: ${answer.body?.message ?? 'no answer'}`.trim();
