// Messages: the frames of the realtime protocol (README, Realtime), as JSON text with exact numbers.
import { jsonText } from '../content/json';
import type { WireChange } from './changes';

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
