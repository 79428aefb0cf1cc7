// Dead-link check for the docs: every relative link and #anchor in README.md, CHANGELOG.md and docs/**/*.md must resolve to a file
// of the repository and, for a Markdown target, to a heading of it (GitHub's anchor rules). External links are not
// fetched. Run by test/unit/docs.test.ts; alone: `npx tsx scripts/check-links.ts` (exit 1 and a list when broken).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** A link that does not resolve: where it is and why. */
export interface DeadLink {
  file: string;
  line: number;
  target: string;
  reason: string;
}

/** The Markdown files whose links are checked: README.md, CHANGELOG.md and everything under docs/, relative to `root`. */
export function docFiles(root: string): string[] {
  const found = ['README.md', 'CHANGELOG.md'].filter((name) => existsSync(join(root, name)));
  const walk = (dir: string) => {
    for (const name of readdirSync(join(root, dir)).sort()) {
      const path = join(dir, name);
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) found.push(path);
    }
  };
  walk('docs');
  return found;
}

/** Lines outside fenced code blocks (those inside are blank): links in code are examples, not links. */
function proseLines(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker !== undefined && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return '';
    }
    return fence === undefined ? line : '';
  });
}

/** A line with its inline code blanked. */
const withoutInlineCode = (line: string) => line.replace(/(`+)[^`]*?\1/g, (code) => ' '.repeat(code.length));

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingAnchor(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** The anchors a Markdown file defines: one per heading (repeats numbered -1, -2, ...) and explicit `id`s. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = headingAnchor(heading);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const m of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1] as string);
  }
  return anchors;
}

/** Every `[text](target)` link of a file's prose, with its line number. */
function linksOf(text: string): { line: number; target: string }[] {
  const links: { line: number; target: string }[] = [];
  proseLines(text).forEach((line, i) => {
    for (const m of withoutInlineCode(line).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line: i + 1, target: m[1] as string });
    }
  });
  return links;
}

/** The links of `files` (relative to `root`) that do not resolve. */
export function findDeadLinks(root: string, files: readonly string[] = docFiles(root)): DeadLink[] {
  const anchorCache = new Map<string, Set<string>>();
  const anchorsIn = (path: string) => {
    let anchors = anchorCache.get(path);
    if (anchors === undefined) {
      anchors = anchorsOf(readFileSync(path, 'utf8'));
      anchorCache.set(path, anchors);
    }
    return anchors;
  };
  const dead: DeadLink[] = [];
  for (const file of files) {
    const source = join(root, file);
    for (const { line, target } of linksOf(readFileSync(source, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const resolved = pathPart === '' ? source : resolve(dirname(source), pathPart);
      const report = (reason: string) => dead.push({ file, line, target, reason });
      if (!resolved.startsWith(resolve(root))) {
        report('points outside the repository');
        continue;
      }
      if (!existsSync(resolved)) {
        report(`no file ${relative(root, resolved)}`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (!resolved.endsWith('.md')) {
        if (!/^L\d+(-L\d+)?$/.test(anchor)) report('an anchor into a file that is not Markdown');
        continue;
      }
      if (!anchorsIn(resolved).has(anchor)) report(`no heading #${anchor} in ${relative(root, resolved)}`);
    }
  }
  return dead;
}

// Run as a script (not imported by the test): the repository is the folder above this file's.
const script = process.argv[1];
if (script !== undefined && /check-links\.[cm]?[tj]s$/.test(script)) {
  const root = resolve(dirname(script), '..');
  const dead = findDeadLinks(root);
  for (const d of dead) process.stderr.write(`${d.file}:${d.line}: ${d.target}: ${d.reason}\n`);
  process.exitCode = dead.length > 0 ? 1 : 0;
}
