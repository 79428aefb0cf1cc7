// The expression state every compiled request is built in: clauses, names and values with deterministic
// placeholders (#n0, :v0), and the request shapes it builds.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Step } from '../content/model';
import type { JsonNumber } from '../content/json';
import { A } from '../schema/attributes';

export interface UpdateRequest {
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, AttributeValue>;
}

export interface GetRequest {
  ProjectionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
}

/** Accumulates clauses, names and values; placeholders are deterministic (#n0, :v0) and names are reused. */
export class ExpressionState {
  private readonly names = new Map<string, string>();
  private readonly values: Record<string, AttributeValue> = {};
  private valueCount = 0;
  readonly sets: string[] = [];
  readonly removes: string[] = [];
  readonly conditions: string[] = [];

  name(raw: string): string {
    let placeholder = this.names.get(raw);
    if (placeholder === undefined) {
      placeholder = `#n${this.names.size}`;
      this.names.set(raw, placeholder);
    }
    return placeholder;
  }

  value(attribute: AttributeValue): string {
    const placeholder = `:v${this.valueCount++}`;
    this.values[placeholder] = attribute;
    return placeholder;
  }

  number(n: JsonNumber): string {
    return this.value({ N: String(n) });
  }

  /** `#n0.#n1[3]`: a document path below the content attribute. */
  path(steps: readonly Step[]): string {
    let out = this.name(A.content);
    for (const step of steps) out += typeof step === 'number' ? `[${step}]` : `.${this.name(step)}`;
    return out;
  }

  attributeNames(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [raw, placeholder] of this.names) out[placeholder] = raw;
    return out;
  }

  buildUpdate(): UpdateRequest {
    const clauses = [`SET ${this.sets.join(', ')}`];
    if (this.removes.length > 0) clauses.push(`REMOVE ${this.removes.join(', ')}`);
    return {
      UpdateExpression: clauses.join(' '),
      ConditionExpression: this.conditions.join(' AND '),
      ExpressionAttributeNames: this.attributeNames(),
      ExpressionAttributeValues: { ...this.values },
    };
  }
}
