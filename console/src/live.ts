// Live changes: one subscription to the whole content over the realtime WebSocket, resumed with `since` after a
// reconnect, so a change made anywhere shows in the tree as it lands.
import type { Json, Session } from './api';

/** What the tree is told: each committed change at its absolute path, or that it must read again. */
export interface LiveHandlers {
  change(path: string, change: { value?: unknown; deleted?: boolean }): void;
  reload(): void;
  status(text: string): void;
}

/** Subscribes to the project's content; returns a function that closes the subscription. */
export function subscribe(session: Session, handlers: LiveHandlers): () => void {
  let socket: WebSocket | undefined;
  let revision: string | undefined;
  let closed = false;
  let wait = 500;
  const newer = (r: string) =>
    revision === undefined || r.length > revision.length || (r.length === revision.length && r > revision);
  const open = () => {
    if (closed) return;
    socket = new WebSocket(session.realtime);
    socket.onopen = () => {
      wait = 500;
      socket?.send(
        JSON.stringify({
          action: 'subscribe',
          project: session.project,
          token: session.token,
          ...(revision ? { since: revision } : {}),
        }),
      );
    };
    socket.onmessage = (event) => {
      let frame: Json;
      try {
        frame = JSON.parse(String(event.data));
      } catch {
        return;
      }
      if (frame.type === 'subscribed') handlers.status('live');
      else if (frame.type === 'error') handlers.status(`live updates refused: ${frame.code}`);
      else if (frame.type === 'revoked') handlers.status('live updates ended: access revoked');
      else if (typeof frame.revision === 'string' && newer(frame.revision)) {
        const first = revision === undefined;
        revision = frame.revision;
        if (frame.type === 'change') for (const c of frame.changes ?? []) handlers.change(c.path, c);
        else if (frame.type === 'changed' || (frame.type === 'snapshot' && !first)) handlers.reload();
      }
    };
    socket.onclose = () => {
      if (closed) return;
      handlers.status('reconnecting…');
      setTimeout(open, wait);
      wait = Math.min(wait * 2, 15000);
    };
  };
  open();
  return () => {
    closed = true;
    socket?.close();
  };
}
