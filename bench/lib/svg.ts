// Hand-written SVG charts (no dependencies): empirical CDFs in small multiples, horizontal box plots and a line
// chart, all on shared, labelled axes.
import { quantile, sorted } from './stats';

export interface Series {
  label: string;
  color: string;
  values: number[];
}

const FONT = 'font-family="system-ui, -apple-system, Segoe UI, sans-serif"';
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const n = (v: number) => (Math.round(v * 10) / 10).toString();

function logTicks(min: number, max: number): number[] {
  const ticks: number[] = [];
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (v >= min * 0.999 && v <= max * 1.001) ticks.push(v);
    }
  }
  return ticks;
}

/** 0 and round steps (1, 2 or 5 × 10^k) up to max, about five of them. */
function linearTicks(max: number): number[] {
  const raw = max / 5;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  const ticks: number[] = [];
  for (let v = 0; v <= max; v += step) ticks.push(v);
  return ticks;
}

const tickLabel = (v: number) => (v >= 1000 ? `${v / 1000}s` : v >= 1 ? `${v}` : v.toString());

function legend(series: Array<{ label: string; color: string }>, x: number, y: number): string {
  let out = '';
  let cx = x;
  for (const s of series) {
    out += `<rect x="${n(cx)}" y="${n(y - 9)}" width="14" height="4" fill="${s.color}"/>`;
    out += `<text x="${n(cx + 18)}" y="${n(y - 4)}" font-size="11" ${FONT}>${esc(s.label)}</text>`;
    cx += 26 + s.label.length * 6.2;
  }
  return out;
}

/** Empirical CDFs, one panel per group, log-scale x axis (ms) shared by all panels. */
export function cdfPanels(
  title: string,
  panels: Array<{ title: string; series: Series[] }>,
  options: { columns?: number; unit?: string; note?: string } = {},
): string {
  const columns = options.columns ?? 4;
  const pw = 250;
  const ph = 170;
  const gap = 30;
  const left = 40;
  const top = 58;
  const rows = Math.ceil(panels.length / columns);
  const width = left + columns * (pw + gap);
  const height = top + rows * (ph + gap + 20) + 10;
  const all = panels.flatMap((p) => p.series.flatMap((s) => s.values)).filter((v) => v > 0);
  const lo = Math.max(0.01, quantile(all, 0.001) * 0.9);
  const hi = quantile(all, 0.995) * 1.1;
  const lx = (v: number) =>
    (Math.log10(Math.min(hi, Math.max(lo, v))) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo));
  let out = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`;
  out += `<rect width="100%" height="100%" fill="white"/>`;
  out += `<text x="${left}" y="20" font-size="15" font-weight="600" ${FONT}>${esc(title)}</text>`;
  if (options.note) out += `<text x="${left}" y="36" font-size="11" fill="#555" ${FONT}>${esc(options.note)}</text>`;
  out += legend(panels[0]?.series ?? [], left, 52);
  panels.forEach((panel, i) => {
    const x0 = left + (i % columns) * (pw + gap);
    const y0 = top + Math.floor(i / columns) * (ph + gap + 20) + 14;
    out += `<text x="${x0}" y="${y0 - 4}" font-size="12" font-weight="600" ${FONT}>${esc(panel.title)}</text>`;
    out += `<rect x="${x0}" y="${y0}" width="${pw}" height="${ph}" fill="none" stroke="#ccc"/>`;
    for (const q of [0.5, 0.99]) {
      const y = y0 + ph - q * ph;
      out += `<line x1="${x0}" x2="${x0 + pw}" y1="${n(y)}" y2="${n(y)}" stroke="#eee"/><text x="${x0 - 3}" y="${n(y + 3)}" font-size="9" text-anchor="end" fill="#777" ${FONT}>${q === 0.5 ? 'p50' : 'p99'}</text>`;
    }
    for (const t of logTicks(lo, hi)) {
      const x = x0 + lx(t) * pw;
      out += `<line x1="${n(x)}" x2="${n(x)}" y1="${y0}" y2="${y0 + ph}" stroke="#f0f0f0"/>`;
      out += `<text x="${n(x)}" y="${y0 + ph + 12}" font-size="9" text-anchor="middle" fill="#555" ${FONT}>${tickLabel(t)}</text>`;
    }
    out += `<text x="${x0 + pw}" y="${y0 + ph + 24}" font-size="9" text-anchor="end" fill="#555" ${FONT}>${esc(options.unit ?? 'ms')} (log)</text>`;
    for (const s of panel.series) {
      const all = sorted(s.values);
      if (all.length === 0) continue;
      // At most ~200 steps per curve (an even stride through the sorted samples, the maximum always kept).
      const stride = Math.max(1, Math.ceil(all.length / 200));
      const picked: Array<[number, number]> = [];
      for (let k = 0; k < all.length; k += stride) picked.push([all[k] as number, k]);
      if (picked[picked.length - 1]?.[1] !== all.length - 1)
        picked.push([all[all.length - 1] as number, all.length - 1]);
      let d = '';
      picked.forEach(([value, k], j) => {
        const x = x0 + lx(value) * pw;
        const yPrev = y0 + ph - ((j === 0 ? k : (picked[j - 1]?.[1] ?? 0) + 1) / all.length) * ph;
        const y = y0 + ph - ((k + 1) / all.length) * ph;
        d += `${j === 0 ? 'M' : 'L'}${n(x)},${n(yPrev)}L${n(x)},${n(y)}`;
      });
      out += `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="1.6"/>`;
    }
  });
  return `${out}</svg>\n`;
}

/** Horizontal box plots: box p25-p75, line at the median, whiskers p1-p99, a dot at the max; log x axis. */
export function boxPlots(
  title: string,
  rows: Array<{ label: string; series: Series[] }>,
  options: { unit?: string; note?: string; log?: boolean } = {},
): string {
  const left = Math.max(90, 16 + 6.4 * Math.max(...rows.map((r) => r.label.length)));
  const plotW = 560;
  const rowH = 16;
  const groupGap = 10;
  const top = 60;
  const seriesCount = rows.reduce((s, r) => s + r.series.length, 0);
  const height = top + seriesCount * rowH + rows.length * groupGap + 40;
  const width = left + plotW + 30;
  const all = rows.flatMap((r) => r.series.flatMap((s) => s.values)).filter((v) => v > 0);
  const log = options.log ?? true;
  const lo = log ? Math.max(0.01, quantile(all, 0) * 0.9) : 0;
  const hi = Math.max(...all) * 1.05;
  const sx = (v: number) =>
    left +
    (log ? (Math.log10(Math.max(lo, v)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) : (v - lo) / (hi - lo)) *
      plotW;
  let out = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`;
  out += `<rect width="100%" height="100%" fill="white"/>`;
  out += `<text x="10" y="20" font-size="15" font-weight="600" ${FONT}>${esc(title)}</text>`;
  if (options.note) out += `<text x="10" y="36" font-size="11" fill="#555" ${FONT}>${esc(options.note)}</text>`;
  const legendSeries = rows.find((r) => r.series.length > 1)?.series ?? [];
  if (legendSeries.length > 1) out += legend(legendSeries, left, 52);
  const bottom = height - 30;
  const ticks = log ? logTicks(lo, hi) : linearTicks(hi);
  for (const t of ticks) {
    const x = sx(t);
    out += `<line x1="${n(x)}" x2="${n(x)}" y1="${top - 4}" y2="${bottom}" stroke="#eee"/>`;
    out += `<text x="${n(x)}" y="${bottom + 12}" font-size="9" text-anchor="middle" fill="#555" ${FONT}>${tickLabel(t)}</text>`;
  }
  out += `<text x="${left + plotW}" y="${bottom + 24}" font-size="9" text-anchor="end" fill="#555" ${FONT}>${esc(options.unit ?? 'ms')}${log ? ' (log)' : ''}</text>`;
  let y = top;
  for (const row of rows) {
    out += `<text x="${left - 8}" y="${n(y + (row.series.length * rowH) / 2 + 4)}" font-size="11" text-anchor="end" ${FONT}>${esc(row.label)}</text>`;
    for (const s of row.series) {
      if (s.values.length > 0) {
        const [p1, p25, p50, p75, p99, max] = [0.01, 0.25, 0.5, 0.75, 0.99, 1].map((q) => quantile(s.values, q)) as [
          number,
          number,
          number,
          number,
          number,
          number,
        ];
        const cy = y + rowH / 2;
        out += `<line x1="${n(sx(p1))}" x2="${n(sx(p99))}" y1="${n(cy)}" y2="${n(cy)}" stroke="${s.color}"/>`;
        out += `<rect x="${n(sx(p25))}" y="${n(y + 3)}" width="${n(Math.max(1, sx(p75) - sx(p25)))}" height="${rowH - 6}" fill="${s.color}" fill-opacity="0.35" stroke="${s.color}"/>`;
        out += `<line x1="${n(sx(p50))}" x2="${n(sx(p50))}" y1="${n(y + 2)}" y2="${n(y + rowH - 2)}" stroke="${s.color}" stroke-width="2.5"/>`;
        out += `<circle cx="${n(sx(max))}" cy="${n(cy)}" r="2" fill="${s.color}"/>`;
      }
      y += rowH;
    }
    y += groupGap;
  }
  return `${out}</svg>\n`;
}

/** Lines over time (x in seconds), with shaded, labelled phases. */
export function lineChart(
  title: string,
  series: Array<{ label: string; color: string; points: Array<[number, number]> }>,
  phases: Array<{ label: string; from: number; to: number }>,
  options: { unit?: string; note?: string } = {},
): string {
  const left = 60;
  const top = 60;
  const w = 700;
  const h = 220;
  const width = left + w + 20;
  const height = top + h + 40;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  const xMax = Math.max(...xs, 1);
  const yMax = Math.max(...ys, 1) * 1.1;
  const sx = (v: number) => left + (v / xMax) * w;
  const sy = (v: number) => top + h - (v / yMax) * h;
  let out = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`;
  out += `<rect width="100%" height="100%" fill="white"/>`;
  out += `<text x="10" y="20" font-size="15" font-weight="600" ${FONT}>${esc(title)}</text>`;
  if (options.note) out += `<text x="10" y="36" font-size="11" fill="#555" ${FONT}>${esc(options.note)}</text>`;
  out += legend(series, left, 52);
  phases.forEach((p, i) => {
    out += `<rect x="${n(sx(p.from))}" y="${top}" width="${n(Math.max(0, sx(p.to) - sx(p.from)))}" height="${h}" fill="${i % 2 ? '#f6f6f6' : '#ececec'}"/>`;
    out += `<text x="${n((sx(p.from) + sx(p.to)) / 2)}" y="${top + 12}" font-size="9" text-anchor="middle" fill="#555" ${FONT}>${esc(p.label)}</text>`;
  });
  for (let k = 0; k <= 4; k++) {
    const v = (yMax / 4) * k;
    out += `<line x1="${left}" x2="${left + w}" y1="${n(sy(v))}" y2="${n(sy(v))}" stroke="#ddd"/><text x="${left - 4}" y="${n(sy(v) + 3)}" font-size="9" text-anchor="end" fill="#555" ${FONT}>${Math.round(v)}</text>`;
  }
  out += `<text x="${left - 30}" y="${top + h / 2}" font-size="9" text-anchor="middle" fill="#555" transform="rotate(-90 ${left - 30} ${top + h / 2})" ${FONT}>${esc(options.unit ?? '')}</text>`;
  for (let k = 0; k <= 5; k++) {
    const v = (xMax / 5) * k;
    out += `<text x="${n(sx(v))}" y="${top + h + 12}" font-size="9" text-anchor="middle" fill="#555" ${FONT}>${v.toFixed(0)} s</text>`;
  }
  for (const s of series) {
    const stride = Math.max(1, Math.ceil(s.points.length / 600));
    const d = s.points
      .filter((_, k) => k % stride === 0 || k === s.points.length - 1)
      .map(([x, y], k) => `${k === 0 ? 'M' : 'L'}${n(sx(x))},${n(sy(y))}`)
      .join('');
    out += `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="1.5"/>`;
  }
  return `${out}</svg>\n`;
}
