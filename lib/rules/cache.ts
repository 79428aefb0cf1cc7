// Compiled rules per warm Lambda: a document is compiled once per (project, incarnation, version) and kept, so a
// request that rules concern evaluates conditions without compiling (the version is proven with the grant epoch).
import { setBounded } from '../config/bounded';
import type { StoredRules } from './stored';
import { type RuleSet, compileRules } from './document';
import { loadEngines } from './load';

const CACHE_SIZE = 100;
const compiled = new Map<string, RuleSet>();

/** The compiled document of a stored version; a stored document that no longer compiles grants nothing. */
export async function compiledRules(project: string, inc: string, stored: StoredRules): Promise<RuleSet> {
  const id = `${project} ${inc} ${stored.version}`;
  const hit = compiled.get(id);
  if (hit) return hit;
  const engines = await loadEngines();
  let set: RuleSet;
  try {
    set = compileRules(engines, stored.document);
  } catch {
    set = compileRules(engines, { rules: [] });
  }
  setBounded(compiled, id, set, CACHE_SIZE);
  return set;
}
