'use strict';

// Small statistics and formatting helpers shared by the scenarios.

function sorted(values) {
  return values.slice().sort((a, b) => a - b);
}

/** The p-th percentile (0..100) by nearest rank; NaN for an empty list. */
function percentile(values, p) {
  if (values.length === 0) return NaN;
  const s = sorted(values);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

/** The median; the mean of the two middle values for an even count. */
function median(values) {
  if (values.length === 0) return NaN;
  const s = sorted(values);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function mean(values) {
  if (values.length === 0) return NaN;
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** Fixed decimals, or 'n/a' for a missing value. */
function fixed(value, digits = 1) {
  if (value == null || Number.isNaN(value)) return 'n/a';
  return value.toFixed(digits);
}

/** A whole number with thousands separators, or 'n/a'. */
function count(value) {
  if (value == null || Number.isNaN(value)) return 'n/a';
  return Math.round(value).toLocaleString('en-US');
}

/** Reads a positive number from the environment, or the default. */
function envNumber(name, fallback) {
  const raw = process.env[name];
  if (raw == null || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** Resolves after `ms` milliseconds. */
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

module.exports = { percentile, median, mean, fixed, count, envNumber, sleep };
