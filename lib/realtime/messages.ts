// Messages: the frames of the realtime protocol (README, Realtime), as JSON text with exact numbers.
import { jsonText } from '../content/json';
import type { WireChange } from '../storage';

/** API Gateway's largest WebSocket message; a change or snapshot over it becomes `changed` (fetch it with GET). */
export const MAX_MESSAGE_BYTES = 128 * 1024;

export type ServerMessage =
  | { type: 'subscribed'; id: string; path: string; ref?: string }
  | { type: 'snapshot'; id: string; revision: string; value?: unknown; missing?: true }
  | { type: 'change'; id: string; revision: string; changes: WireChange[] }
  | { type: 'changed'; id: string; revision: string }
  | { type: 'revoked'; id: string }
  | { type: 'unsubscribed'; id: string }
  | { type: 'pong' }
  | { type: 'error'; code: string; message: string; id?: string; ref?: string };

/** A message's JSON text, exact numbers with every digit. */
export const encode = (message: ServerMessage): string => jsonText(message);

/** The frame for a message, or `changed` in its place when it is over API Gateway's limit. */
export function encodeWithin(message: ServerMessage & { id: string; revision: string }): string {
  const text = encode(message);
  if (Buffer.byteLength(text) <= MAX_MESSAGE_BYTES) return text;
  return encode({ type: 'changed', id: message.id, revision: message.revision });
}

type SharedMessage = Extract<ServerMessage, { id: string; revision: string }>;
/** A message of several subscriptions, without the `id` each frame adds. */
type Shared = SharedMessage extends infer M ? (M extends unknown ? Omit<M, 'id'> : never) : never;

/**
 * One message for many subscriptions, encoded once: each frame is the same text with its subscription's `id`
 * spliced in (ids are base64url, which JSON does not escape), or `changed` in its place when that frame is over API
 * Gateway's limit.
 */
export function encodeForEach(message: Shared): (id: string) => string {
  // `id` right after `type`: its place in the text is known without searching the values.
  const { type, ...rest } = message;
  const text = encode({ type, id: '', ...rest } as SharedMessage);
  const head = `{"type":${JSON.stringify(message.type)},"id":"`;
  const bytes = Buffer.byteLength(text);
  return (id) =>
    bytes + id.length <= MAX_MESSAGE_BYTES
      ? head + id + text.slice(head.length)
      : encode({ type: 'changed', id, revision: message.revision });
}
