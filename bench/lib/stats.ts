// Shared statistics: quantiles (nearest rank), summaries, and the spread of a statistic across repeated blocks.

/** Sorted copy, ascending. */
export const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);

/** Nearest-rank quantile (q in 0..1) of unsorted values; NaN for none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const s = sorted(values);
  const rank = Math.min(s.length, Math.max(1, Math.ceil(q * s.length)));
  return s[rank - 1] as number;
}

export const median = (values: readonly number[]) => quantile(values, 0.5);
export const p99 = (values: readonly number[]) => quantile(values, 0.99);
export const mean = (values: readonly number[]) =>
  values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;

export interface Summary {
  n: number;
  min: number;
  p25: number;
  median: number;
  p75: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(values: readonly number[]): Summary {
  return {
    n: values.length,
    min: quantile(values, 0),
    p25: quantile(values, 0.25),
    median: median(values),
    p75: quantile(values, 0.75),
    p90: quantile(values, 0.9),
    p99: p99(values),
    max: values.length === 0 ? Number.NaN : Math.max(...values),
    mean: mean(values),
  };
}

/** Operations per second over a wall-clock interval in ms. */
export const throughput = (operations: number, wallMs: number) =>
  wallMs > 0 ? (operations * 1000) / wallMs : Number.NaN;

/** The spread of a per-block statistic: its min, median and max across blocks (noise the report shows). */
export function spread(values: readonly number[]): { min: number; median: number; max: number } {
  return {
    min: quantile(values, 0),
    median: median(values),
    max: values.length === 0 ? Number.NaN : Math.max(...values),
  };
}

/** Fixed-point formatting that keeps NaN readable. */
export const fmt = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '—');

/** A deterministic PRNG, so contention workloads are the same on every run. */
export { seededRandom as rng } from '../../test/support/random';
