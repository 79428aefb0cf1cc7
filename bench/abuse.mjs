// Abuse measurements (issue 27): wide merge patches, self-copying JSON Patches and what a GET meanwhile waits, against
// a running local API. Start `PORT=0 DATA_DIR=:memory: npm start`, then:
//   node bench/abuse.mjs http://127.0.0.1:<port>/api/@demo/site <demo API key>
// WHICH (merge,patch,batch,copy,bucketed,concurrent), MERGE_NS and COPY_NS choose the cases; times are wall clock.
const [api, key] = process.argv.slice(2);
const h = { authorization: `Bearer ${key}` };
async function req(method, path, body, type = 'application/json') {
  const t = performance.now();
  const r = await fetch(`${api}/content${path}`, {
    method,
    headers: { ...h, 'content-type': type },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, ms: Math.round(performance.now() - t), body: text.slice(0, 160) };
}
const which = process.env.WHICH ?? 'merge,patch,batch,copy';
await req('POST', '/update', { content: { amp: { v: 'x'.repeat(80) }, keep: 1 } });
if (which.includes('merge'))
  for (const n of (process.env.MERGE_NS ?? '5000,20000,42000').split(',').map(Number)) {
    const patch = Object.fromEntries(Array.from({ length: n }, (_, i) => [`z${i}`, null]));
    const r = await req('PATCH', '', patch, 'application/merge-patch+json');
    console.log(
      `merge patch of ${n} null members (${JSON.stringify(patch).length} bytes): ${r.status} in ${r.ms} ms ${r.body}`,
    );
  }
if (which.includes('patch'))
  for (const n of [5000, 20000]) {
    const ops = Array.from({ length: n }, (_, i) => ({ op: 'remove', path: `/zz/q${i}` }));
    const r = await req('PATCH', '', ops, 'application/json-patch+json');
    console.log(`JSON Patch of ${n} removes: ${r.status} in ${r.ms} ms ${r.body}`);
    const adds = Array.from({ length: n }, (_, i) => ({ op: 'add', path: `/zz${i}`, value: 1 }));
    const a = await req('PATCH', '', adds, 'application/json-patch+json');
    console.log(`JSON Patch of ${n} adds: ${a.status} in ${a.ms} ms ${a.body}`);
    await req('POST', '/update', { content: { amp: { v: 'x'.repeat(80) }, keep: 1 } });
  }
if (which.includes('batch'))
  for (const n of [1000, 5000]) {
    const ops = Array.from({ length: n }, (_, i) => ({ op: 'set', path: `b${i}`, value: 1 }));
    const r = await req('POST', '/batch', { operations: ops });
    console.log(`batch of ${n} sets: ${r.status} in ${r.ms} ms ${r.body}`);
    await req('POST', '/update', { content: { amp: { v: 'x'.repeat(80) }, keep: 1 } });
  }
if (which.includes('copy'))
  for (const n of (process.env.COPY_NS ?? '16,20,29').split(',').map(Number)) {
    const ops = Array.from({ length: n }, (_, i) => ({ op: 'copy', from: '/amp', path: `/amp/k${i}` }));
    const r = await req('PATCH', '', ops, 'application/json-patch+json');
    const g = await req('GET', '');
    console.log(
      `${n} self-copies: ${r.status} in ${r.ms} ms ${r.body}; then GET ${g.status} (${g.body.length} chars) in ${g.ms} ms`,
    );
  }
const t = await req('GET', '');
console.log('final GET', t.status, t.ms, t.body.slice(0, 100));
if (which.includes('bucketed')) {
  // A content bucketed at its root and in a member: merge patches naming many members, some of them there.
  const members = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`z${i}`, { n: i }]));
  const u = await req('POST', '/update', { content: { ...members, obj: members } });
  console.log(`bucketed content of 2 x 3000 members: ${u.status} in ${u.ms} ms`);
  for (const n of (process.env.MERGE_NS ?? '5000,20000').split(',').map(Number)) {
    const patch = Object.fromEntries(Array.from({ length: n }, (_, i) => [`z${i}`, i % 2 ? null : { m: 1 }]));
    const r = await req('PATCH', '', patch, 'application/merge-patch+json');
    console.log(`merge patch of ${n} members of a bucketed root: ${r.status} in ${r.ms} ms ${r.body}`);
    const inner = { obj: Object.fromEntries(Array.from({ length: n }, (_, i) => [`z${i}`, i % 2 ? null : 1])) };
    const q = await req('PATCH', '', inner, 'application/merge-patch+json');
    console.log(`merge patch of ${n} members of a bucketed member: ${q.status} in ${q.ms} ms ${q.body}`);
  }
}
if (which.includes('concurrent')) {
  const patch = Object.fromEntries(Array.from({ length: 20000 }, (_, i) => [`z${i}`, null]));
  const merge = req('PATCH', '', patch, 'application/merge-patch+json');
  await new Promise((r) => setTimeout(r, 20));
  const get = req('GET', '');
  const [m, g] = await Promise.all([merge, get]);
  console.log(`merge of 20000 nulls ${m.status} in ${m.ms} ms; a GET sent 20 ms later: ${g.status} in ${g.ms} ms`);
}
