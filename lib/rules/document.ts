// The rules document: validated and compiled as a whole (patterns, CEL conditions, schemas), with the warnings a
// PUT answers. Pure; a refusal names the rule's index and what is wrong, and nothing of it is kept.
import type { ValidateFunction } from 'ajv';
import { Refusal } from '../config/errors';
import { type Condition, ConditionError, compileCondition } from './conditions';
import { type Pattern, PatternError, capturesOf, parsePattern, subsumes } from './patterns';
import type { Engines } from './load';
import { SchemaError, compileSchema, schemaCompiler } from './schemas';

/** At most this many rules in a document, and this many bytes of JSON. */
export const MAX_RULES = 500;
export const MAX_RULES_BYTES = 256 * 1024;
/** At most this many rules with a schema (ajv compiles one in a few milliseconds: a PUT stays well under a second). */
export const MAX_SCHEMAS = 50;

/** The operations a rule grants. */
export type RuleOperation = 'read' | 'write';
const RULE_FIELDS = new Set(['match', 'read', 'write', 'validate']);
const DOCUMENT_FIELDS = new Set(['rules', 'allowPublicWrite']);

/** One compiled rule, at its index in the document. */
export interface CompiledRule {
  index: number;
  pattern: Pattern;
  read?: Condition;
  write?: Condition;
  validate?: ValidateFunction;
}

/** A compiled document: what decisions and the tester evaluate. */
export interface RuleSet {
  /** The document as stored (and as GET answers it). */
  source: { rules: unknown[]; allowPublicWrite?: boolean };
  rules: readonly CompiledRule[];
  warnings: string[];
  /** Some rule has a schema: writes must compute the value they leave. */
  validates: boolean;
}

const invalid = (message: string) => new Refusal('INVALID_RULES', message);

/** Compiles one rule; throws INVALID_RULES naming `rules[index]`. */
function compileRule(
  engines: Engines,
  raw: unknown,
  index: number,
  ajv: ReturnType<typeof schemaCompiler>,
): CompiledRule {
  const at = `rules[${index}]`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(`${at} must be an object`);
  const unknown = Object.keys(raw).find((key) => !RULE_FIELDS.has(key));
  if (unknown !== undefined) throw invalid(`${at} has an unknown field '${unknown.slice(0, 100)}'`);
  const fields = raw as Record<string, unknown>;
  try {
    const pattern = parsePattern(fields.match);
    const captures = capturesOf(pattern);
    const rule: CompiledRule = { index, pattern };
    if (fields.read !== undefined) rule.read = compileCondition(engines, fields.read, captures);
    if (fields.write !== undefined) rule.write = compileCondition(engines, fields.write, captures);
    if (fields.validate !== undefined) {
      if (pattern.deep) throw new SchemaError('validate needs a pattern without ** (it binds the one node named)');
      rule.validate = compileSchema(ajv, fields.validate);
    }
    return rule;
  } catch (error) {
    if (error instanceof PatternError || error instanceof ConditionError || error instanceof SchemaError) {
      throw invalid(`${at}: ${error.message}`);
    }
    throw error;
  }
}

/** A pattern that reaches every path of its depth and below (no literal segment, ending in `**`). */
const coversEverything = (pattern: Pattern) => pattern.deep && pattern.segments.every((s) => 'capture' in s);

/** Whether a write condition lets an anonymous caller write (evaluated with no data: the most it can say alone). */
const anonymousMayWrite = (rule: CompiledRule) =>
  rule.write?.evaluate({ auth: null, path: '', now: Date.now(), captures: {}, data: null, newData: null }) === true;

/** Rules whose grant of an operation can never change a decision: a `**` rule above them grants it unconditionally. */
function shadowWarnings(rules: readonly CompiledRule[]): string[] {
  const warnings: string[] = [];
  for (const operation of ['read', 'write'] as const) {
    const open = rules.filter((rule) => rule.pattern.deep && rule[operation]?.source.trim() === 'true');
    for (const rule of rules) {
      if (rule[operation] === undefined) continue;
      const above = open.find(
        (outer) =>
          outer !== rule &&
          subsumes(outer.pattern, rule.pattern) &&
          !(
            subsumes(rule.pattern, outer.pattern) &&
            rule[operation]?.source.trim() === 'true' &&
            rule.index < outer.index
          ),
      );
      if (above) {
        warnings.push(
          `rules[${rule.index}].${operation} can never change a decision: rules[${above.index}] (${above.pattern.source}) already grants ${operation} to everyone there, and rules never take access back`,
        );
      }
    }
  }
  return warnings;
}

/** Validates and compiles a rules document with the loaded engines (lib/rules/load.ts) (`{"rules": [...], "allowPublicWrite"?}`); throws INVALID_RULES. */
export function compileRules(engines: Engines, document: unknown): RuleSet {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw invalid('the rules document must be an object with "rules"');
  }
  const unknown = Object.keys(document).find((key) => !DOCUMENT_FIELDS.has(key));
  if (unknown !== undefined) throw invalid(`unknown field '${unknown.slice(0, 100)}'`);
  const { rules, allowPublicWrite } = document as Record<string, unknown>;
  if (!Array.isArray(rules)) throw invalid('"rules" must be an array');
  if (allowPublicWrite !== undefined && typeof allowPublicWrite !== 'boolean') {
    throw invalid('"allowPublicWrite" must be a boolean');
  }
  if (rules.length > MAX_RULES) throw invalid(`at most ${MAX_RULES} rules (got ${rules.length})`);
  if (Buffer.byteLength(JSON.stringify(document)) > MAX_RULES_BYTES) {
    throw invalid(`the rules document must be at most ${MAX_RULES_BYTES} bytes of JSON`);
  }
  const schemas = rules.filter((rule) => typeof rule === 'object' && rule !== null && 'validate' in rule).length;
  if (schemas > MAX_SCHEMAS) throw invalid(`at most ${MAX_SCHEMAS} rules with validate (got ${schemas})`);
  const ajv = schemaCompiler(engines);
  const compiled = rules.map((raw, index) => compileRule(engines, raw, index, ajv));
  if (allowPublicWrite !== true) {
    const open = compiled.find((rule) => coversEverything(rule.pattern) && anonymousMayWrite(rule));
    if (open) {
      throw invalid(
        `rules[${open.index}] lets anyone write everywhere under '${open.pattern.source}'; say "allowPublicWrite": true if that is meant`,
      );
    }
  }
  return {
    source: allowPublicWrite === undefined ? { rules } : { rules, allowPublicWrite },
    rules: compiled,
    warnings: shadowWarnings(compiled),
    validates: compiled.some((rule) => rule.validate !== undefined),
  };
}
