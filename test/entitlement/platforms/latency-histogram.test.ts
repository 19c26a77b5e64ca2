import { expect, test } from 'bun:test';
import { LatencyHistogram } from '../../../src/entitlement/index.ts';

/** The quantiles the operator console reads from a platform's call histogram, as Prometheus's histogram_quantile. */

test('no observation: no quantile', () => {
  expect(new LatencyHistogram().quantile(0.5)).toBeUndefined();
});

test('linear within the bucket the rank falls in', () => {
  const h = new LatencyHistogram([0.01, 0.1, 1]);
  for (let i = 0; i < 50; i++) h.observe(0.005); // (0, 0.01]
  for (let i = 0; i < 50; i++) h.observe(0.05); // (0.01, 0.1]
  expect(h.quantile(0.5)).toBeCloseTo(0.01, 10);
  expect(h.quantile(0.25)).toBeCloseTo(0.005, 10);
  expect(h.quantile(0.95)).toBeCloseTo(0.01 + 0.09 * 0.9, 10);
  expect(h.quantile(1)).toBeCloseTo(0.1, 10);
});

test('in the +Inf bucket: the highest finite bound', () => {
  const h = new LatencyHistogram([0.01, 0.1]);
  h.observe(0.005);
  for (let i = 0; i < 9; i++) h.observe(30);
  expect(h.quantile(0.95)).toBe(0.1);
  expect(h.quantile(0.05)).toBeCloseTo(0.005, 10);
});
