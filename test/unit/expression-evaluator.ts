// A small model of DynamoDB expressions, just the subset the compiler emits, so compiled requests can be run
// against an in-memory item and compared with the content model. Semantics follow DynamoDB's documentation:
// SET evaluates every right-hand side against the item before the update, SET list[i] with i >= size appends,
// REMOVE of a missing path does nothing, comparisons with a missing operand are false.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

export type Item = Record<string, AttributeValue>;
type Step = { key: string } | { index: number };
type Token = { kind: 'word' | 'name' | 'value' | 'number' | 'punct'; text: string };

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  const text = expression.trimEnd();
  const pattern = /\s*(?:(#\w+)|(:\w+)|([A-Za-z_]+)|([0-9]+)|(<>|>=|<=|[()[\],.=<>+]))/y;
  while (pattern.lastIndex < text.length) {
    const match = pattern.exec(text);
    if (match === null) throw new InvalidExpression(`cannot read the expression at: ${text.slice(pattern.lastIndex)}`);
    if (match[1]) tokens.push({ kind: 'name', text: match[1] });
    else if (match[2]) tokens.push({ kind: 'value', text: match[2] });
    else if (match[3]) tokens.push({ kind: 'word', text: match[3] });
    else if (match[4]) tokens.push({ kind: 'number', text: match[4] });
    else tokens.push({ kind: 'punct', text: match[5] as string });
  }
  return tokens;
}

/** Thrown where DynamoDB would answer with a ValidationException (with DynamoDB's message where the store reads it). */
export class InvalidExpression extends Error {
  override name = 'ValidationException';
}

const INCORRECT_TYPE = 'An operand in the update expression has an incorrect data type';

class Parser {
  private at = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly names: Record<string, string>,
    private readonly values: Record<string, AttributeValue>,
  ) {}

  done(): boolean {
    return this.at >= this.tokens.length;
  }
  peek(text?: string): boolean {
    const token = this.tokens[this.at];
    return token !== undefined && (text === undefined || token.text === text);
  }
  take(text?: string): Token {
    const token = this.tokens[this.at];
    if (token === undefined || (text !== undefined && token.text !== text)) {
      throw new InvalidExpression(`expected ${text ?? 'a token'} at ${this.at}, found ${token?.text ?? 'the end'}`);
    }
    this.at++;
    return token;
  }

  path(): Step[] {
    const first = this.take();
    if (first.kind !== 'name') throw new InvalidExpression(`expected a path, found ${first.text}`);
    const steps: Step[] = [{ key: this.name(first.text) }];
    for (;;) {
      if (this.peek('.')) {
        this.take('.');
        steps.push({ key: this.name(this.take().text) });
      } else if (this.peek('[')) {
        this.take('[');
        steps.push({ index: Number(this.take().text) });
        this.take(']');
      } else return steps;
    }
  }
  name(placeholder: string): string {
    const raw = this.names[placeholder];
    if (raw === undefined) throw new InvalidExpression(`unknown name ${placeholder}`);
    return raw;
  }
  value(placeholder: string): AttributeValue {
    const value = this.values[placeholder];
    if (value === undefined) throw new InvalidExpression(`unknown value ${placeholder}`);
    return value;
  }

  /** An operand of a condition: a path, a value or size(path). */
  operand(item: Item): AttributeValue | undefined {
    if (this.peek('size')) {
      this.take('size');
      this.take('(');
      const target = get(item, this.path());
      this.take(')');
      if (target === undefined) return undefined;
      const size = target.L?.length ?? (target.M ? Object.keys(target.M).length : target.S?.length);
      return size === undefined ? undefined : { N: String(size) };
    }
    if (this.tokens[this.at]?.kind === 'value') return this.value(this.take().text);
    return get(item, this.path());
  }

  condition(item: Item): boolean {
    let result = this.conjunction(item);
    while (this.peek('OR')) {
      this.take('OR');
      result = this.conjunction(item) || result;
    }
    return result;
  }
  conjunction(item: Item): boolean {
    let result = this.primary(item);
    while (this.peek('AND')) {
      this.take('AND');
      result = this.primary(item) && result;
    }
    return result;
  }
  primary(item: Item): boolean {
    if (this.peek('NOT')) {
      this.take('NOT');
      return !this.primary(item);
    }
    if (this.peek('(')) {
      this.take('(');
      const result = this.condition(item);
      this.take(')');
      return result;
    }
    for (const fn of ['attribute_exists', 'attribute_not_exists', 'attribute_type', 'contains'] as const) {
      if (!this.peek(fn)) continue;
      this.take(fn);
      this.take('(');
      const target = get(item, this.path());
      let argument: AttributeValue | undefined;
      if (fn === 'attribute_type' || fn === 'contains') {
        this.take(',');
        argument = this.operand(item);
      }
      this.take(')');
      if (fn === 'attribute_exists') return target !== undefined;
      if (fn === 'attribute_not_exists') return target === undefined;
      if (fn === 'attribute_type') return target !== undefined && typeOf(target) === argument?.S;
      return target?.L?.some((v) => equal(v, argument)) ?? target?.SS?.includes(argument?.S ?? '') ?? false;
    }
    const left = this.operand(item);
    const operator = this.take().text;
    if (operator === 'BETWEEN') {
      const low = this.operand(item);
      this.take('AND');
      const high = this.operand(item);
      return (
        compare(left, low) !== undefined &&
        compare(left, low)! >= 0 &&
        compare(left, high) !== undefined &&
        compare(left, high)! <= 0
      );
    }
    if (operator === 'IN') {
      this.take('(');
      const candidates = [this.operand(item)];
      while (this.peek(',')) {
        this.take(',');
        candidates.push(this.operand(item));
      }
      this.take(')');
      return candidates.some((c) => equal(left, c));
    }
    const right = this.operand(item);
    const order = compare(left, right);
    if (order === undefined) return false;
    switch (operator) {
      case '=':
        return order === 0;
      case '<>':
        return order !== 0;
      case '<':
        return order < 0;
      case '<=':
        return order <= 0;
      case '>':
        return order > 0;
      case '>=':
        return order >= 0;
    }
    throw new InvalidExpression(`unknown operator ${operator}`);
  }

  /** A SET right-hand side, evaluated against the item as it was before the update. */
  setValue(item: Item): AttributeValue {
    let result = this.setTerm(item);
    while (this.peek('+')) {
      this.take('+');
      const right = this.setTerm(item);
      if (result.N === undefined || right.N === undefined) throw new InvalidExpression(INCORRECT_TYPE);
      result = { N: String(Number(result.N) + Number(right.N)) };
    }
    return result;
  }
  setTerm(item: Item): AttributeValue {
    if (this.peek('list_append')) {
      this.take('list_append');
      this.take('(');
      const a = this.setValue(item);
      this.take(',');
      const b = this.setValue(item);
      this.take(')');
      if (a.L === undefined || b.L === undefined) throw new InvalidExpression(INCORRECT_TYPE);
      return { L: [...a.L, ...b.L] };
    }
    if (this.peek('if_not_exists')) {
      this.take('if_not_exists');
      this.take('(');
      const existing = get(item, this.path());
      this.take(',');
      const fallback = this.setValue(item);
      this.take(')');
      return existing ?? fallback;
    }
    if (this.tokens[this.at]?.kind === 'value') return this.value(this.take().text);
    const found = get(item, this.path());
    if (found === undefined)
      throw new InvalidExpression('the provided expression refers to an attribute that does not exist');
    return found;
  }
}

function typeOf(value: AttributeValue): string {
  return Object.keys(value).find((k) => (value as unknown as Record<string, unknown>)[k] !== undefined) ?? '';
}

function compare(a: AttributeValue | undefined, b: AttributeValue | undefined): number | undefined {
  if (a === undefined || b === undefined) return undefined;
  if (a.N !== undefined && b.N !== undefined) return Math.sign(Number(a.N) - Number(b.N));
  if (a.S !== undefined && b.S !== undefined) return a.S === b.S ? 0 : a.S < b.S ? -1 : 1;
  return undefined;
}

function equal(a: AttributeValue | undefined, b: AttributeValue | undefined): boolean {
  return a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

function get(item: Item, steps: Step[]): AttributeValue | undefined {
  let node: AttributeValue | undefined = { M: item };
  for (const step of steps) {
    if (node === undefined) return undefined;
    if ('key' in step) node = node.M && Object.hasOwn(node.M, step.key) ? node.M[step.key] : undefined;
    else node = node.L?.[step.index];
  }
  return node;
}

function put(item: Item, steps: Step[], value: AttributeValue): void {
  const parent = get(item, steps.slice(0, -1));
  const last = steps[steps.length - 1] as Step;
  if ('key' in last && parent?.M) {
    Object.defineProperty(parent.M, last.key, { value, enumerable: true, writable: true, configurable: true });
  } else if ('index' in last && parent?.L) {
    if (last.index < parent.L.length) parent.L[last.index] = value;
    else parent.L.push(value);
  } else {
    throw new InvalidExpression('The document path provided in the update expression is invalid for update');
  }
}

function remove(item: Item, steps: Step[]): void {
  const parent = get(item, steps.slice(0, -1));
  const last = steps[steps.length - 1] as Step;
  if ('key' in last && parent?.M) delete parent.M[last.key];
  else if ('index' in last && parent?.L && last.index < parent.L.length) parent.L.splice(last.index, 1);
}

export interface Request {
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, AttributeValue>;
}

/** Whether the condition holds on the item. */
export function conditionHolds(item: Item, request: Request): boolean {
  if (!request.ConditionExpression) return true;
  const parser = new Parser(
    tokenize(request.ConditionExpression),
    request.ExpressionAttributeNames,
    request.ExpressionAttributeValues,
  );
  const result = parser.condition(item);
  if (!parser.done()) throw new InvalidExpression('trailing tokens in the condition');
  return result;
}

/** The item after the update (a copy), as DynamoDB would compute it. */
export function applyUpdate(item: Item, request: Request): Item {
  const before = structuredClone(item);
  const after = structuredClone(item);
  const parser = new Parser(
    tokenize(request.UpdateExpression),
    request.ExpressionAttributeNames,
    request.ExpressionAttributeValues,
  );
  const sets: Array<[Step[], AttributeValue]> = [];
  const removes: Step[][] = [];
  while (!parser.done()) {
    const clause = parser.take().text;
    do {
      if (parser.peek(',')) parser.take(',');
      const path = parser.path();
      if (clause === 'SET') {
        parser.take('=');
        sets.push([path, parser.setValue(before)]);
      } else if (clause === 'REMOVE') {
        removes.push(path);
      } else {
        throw new InvalidExpression(`unknown clause ${clause}`);
      }
    } while (parser.peek(','));
  }
  for (const [path, value] of sets) put(after, path, value);
  // DynamoDB removes list elements from the highest index down, so earlier removals do not shift later ones.
  for (const path of removes.reverse()) remove(after, path);
  return after;
}
