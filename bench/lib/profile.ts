// V8 CPU profiles: self time per code area (our lib/ folders, each npm package, Node built-ins, GC) and the top
// functions, so a missed latency target comes with where the time went.
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT } from './config';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileSummary {
  /** Sampled time that was not idle, ms. */
  busyMs: number;
  /** Sampled time in the profiler's own machinery (inspector calls), left out of busyMs. */
  profilerMs: number;
  /** The window the samples were taken from, ms. */
  windowMs: number;
  idleMs: number;
  byArea: Record<string, number>;
  top: Array<{ function: string; where: string; area: string; selfMs: number }>;
}

function areaOf(url: string, functionName: string): string {
  if (url === '') {
    if (functionName.startsWith('(')) return functionName;
    return '(V8 builtins)';
  }
  if (url.startsWith('node:')) {
    const parts = url.slice(5).split('/');
    return `node:${parts[0] === 'internal' ? parts.slice(0, 2).join('/') : parts[0]}`;
  }
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    const name = rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? '?');
    if (name.startsWith('@aws-sdk/')) return `${name}`;
    if (name.startsWith('@smithy/')) return '@smithy/*';
    return name;
  }
  let path = url;
  try {
    path = relative(ROOT, url.startsWith('file:') ? fileURLToPath(url) : url);
  } catch {
    // keep the url
  }
  const parts = path.split('/');
  if (parts[0] === 'lib') return `lib/${parts[1]}`;
  if (parts[0] === 'functions' || parts[0] === 'bench' || parts[0] === 'test') return parts[0];
  return path;
}

/**
 * Self time per area and function. `window` (µs on the profile's clock, which is the system's monotonic clock, as
 * process.hrtime's) keeps only the samples taken inside it.
 */
export function summarizeProfile(
  profile: CpuProfile,
  topN = 15,
  window?: { from: number; to: number },
): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  // Frames under an inspector call are the profiler's own work, not the code measured.
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const profilerCache = new Map<number, boolean>();
  const underProfiler = (id: number): boolean => {
    const known = profilerCache.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const up = parent.get(id);
    const result = node?.callFrame.url === 'node:inspector' || (up !== undefined && underProfiler(up));
    profilerCache.set(id, result);
    return result;
  };
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let t = profile.startTime;
  let profiler = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  // timeDeltas[i] is the time since the previous sample; charge the interval to the sample that ends it.
  for (let i = 0; i < samples.length; i++) {
    const id = samples[i] as number;
    const delta = Math.max(0, deltas[i] ?? 0);
    t += deltas[i] ?? 0;
    if (window && (t < window.from || t > window.to)) continue;
    first = Math.min(first, t - delta);
    last = Math.max(last, t);
    if (underProfiler(id)) {
      profiler += delta;
      continue;
    }
    self.set(id, (self.get(id) ?? 0) + delta);
  }
  const byArea: Record<string, number> = {};
  const byFunction = new Map<string, { function: string; where: string; area: string; selfMs: number }>();
  let idle = 0;
  let busy = 0;
  for (const [id, micros] of self) {
    const node = byId.get(id);
    if (!node) continue;
    const ms = micros / 1000;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += ms;
      continue;
    }
    busy += ms;
    const area = areaOf(url, functionName);
    byArea[area] = (byArea[area] ?? 0) + ms;
    const where = url
      ? `${areaOf(url, functionName).startsWith('lib/') || url.startsWith('node:') ? relativeUrl(url) : area}:${lineNumber + 1}`
      : '';
    const key = `${functionName}@${url}:${lineNumber}`;
    const entry = byFunction.get(key) ?? { function: functionName || '(anonymous)', where, area, selfMs: 0 };
    entry.selfMs += ms;
    byFunction.set(key, entry);
  }
  const top = [...byFunction.values()].sort((a, b) => b.selfMs - a.selfMs).slice(0, topN);
  return {
    busyMs: busy,
    idleMs: idle,
    profilerMs: profiler / 1000,
    windowMs: last > first ? (last - first) / 1000 : 0,
    byArea,
    top,
  };
}

function relativeUrl(url: string): string {
  if (!url.startsWith('file:')) return url;
  try {
    return relative(ROOT, fileURLToPath(url));
  } catch {
    return url;
  }
}
