// A stored rules document as read from its item (`P#<p>` / `R`): pure, shared by the store, access and the routes.
import { A } from '../schema/attributes';
import { parseJsonText } from '../content/json';

/** A stored rules document as GET answers it; version 0 is "no rules" (nothing stored yet). */
export interface StoredRules {
  document: { rules: unknown[]; allowPublicWrite?: boolean };
  version: number;
}

export const NO_RULES: StoredRules = { document: { rules: [] }, version: 0 };

/** The rules item as read (in a BatchGetItem with the head, or alone); anything else stored reads as no rules. */
export function readRulesItem(item: Record<string, { S?: string; N?: string }> | undefined, inc: string): StoredRules {
  if (!item || item[A.incarnation]?.S !== inc) return NO_RULES;
  try {
    const document = parseJsonText(item[A.rulesDocument]?.S ?? '') as StoredRules['document'];
    if (!Array.isArray(document?.rules)) return NO_RULES;
    return { document, version: Number(item[A.rulesVersion]?.N ?? 0) };
  } catch {
    return NO_RULES;
  }
}
