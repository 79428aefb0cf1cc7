// Rules bench (run alone: `npm run -s bench:rules`): CEL evaluation per request for a 20-rule document, the decision
// as a content request asks it (compiled once, as a warm Lambda keeps it), and compiling the document (a cold start
// or a rules change). Prints medians and p99 in microseconds; exit code 1 when the median misses 50 µs.
import { parsePath } from '../lib/paths';
import { type RuleAuth, decideByRules } from '../lib/rules/decision';
import { compileRules } from '../lib/rules/document';
import { loadEngines } from '../lib/rules/load';

/** 20 rules of the kinds the README's examples use: public subtrees, per-user data, claims, a schema. */
const DOCUMENT = {
  rules: [
    ...Array.from({ length: 8 }, (_, i) => ({ match: `site${i}.**`, read: 'true' })),
    ...Array.from({ length: 8 }, (_, i) => ({
      match: `apps.app${i}.users.{uid}.**`,
      read: 'auth != null && auth.sub == uid',
      write: 'auth != null && auth.sub == uid && auth.claims.plan in ["free", "pro"]',
    })),
    { match: 'drafts.**', read: 'auth != null && auth.claims.role == "editor"' },
    { match: 'events.{id}', read: 'now > timestamp("2020-01-01T00:00:00Z")' },
    { match: 'builds.**', write: 'auth != null && auth.kind == "key"' },
    { match: 'apps.app7.users.{uid}.profile', validate: { type: 'object', required: ['name'] } },
  ],
};

const auth: RuleAuth = { kind: 'user', username: null, sub: 'u42', claims: { plan: 'pro', role: 'viewer' } };
/** The worst case of the document: a path the last per-user rule grants, after every rule before it is matched. */
const questions = [
  { operation: 'write' as const, path: parsePath('apps.app7.users.u42.notes.n1'), auth },
  { operation: 'read' as const, path: parsePath('drafts.post'), auth },
  { operation: 'read' as const, path: parsePath('site3.home'), auth: null },
  { operation: 'read' as const, path: parsePath('apps.app7.users.u41.notes'), auth },
];

function measure(label: string, runs: number, work: () => void): number {
  for (let i = 0; i < Math.min(runs, 2000); i++) work();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = process.hrtime.bigint();
    work();
    samples.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  samples.sort((a, b) => a - b);
  const median = samples[Math.floor(runs / 2)] as number;
  const p99 = samples[Math.floor(runs * 0.99)] as number;
  process.stdout.write(`${label}: median ${median.toFixed(1)} µs, p99 ${p99.toFixed(1)} µs (${runs} runs)\n`);
  return median;
}

const engines = await loadEngines();
const set = compileRules(engines, DOCUMENT);
const medians = questions.map((question, i) =>
  measure(
    `decision ${i + 1} (${question.operation} ${question.path.join('.')}, ${question.auth ? 'user' : 'anonymous'})`,
    20_000,
    () => {
      decideByRules(set, { ...question, now: Date.now() });
    },
  ),
);
measure('compiling the 20-rule document', 200, () => {
  compileRules(engines, DOCUMENT);
});
const worst = Math.max(...medians);
process.stdout.write(`worst median ${worst.toFixed(1)} µs (target < 50 µs): ${worst < 50 ? 'pass' : 'MISS'}\n`);
process.exitCode = worst < 50 ? 0 : 1;
