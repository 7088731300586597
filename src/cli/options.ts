import { parseDuration } from "../core/duration.js";
import { UsageError } from "../core/errors.js";

/** The one value of a flag that may appear at most once (the spec rejects repeats). */
export function single(values: string[] | undefined, flag: string): string | undefined {
  if (values === undefined || values.length === 0) return undefined;
  if (values.length > 1) throw new UsageError(`${flag} given more than once`);
  return values[0];
}

/** Parses `-n <count>`: a non-negative integer written in plain decimal digits (spec §4.2). */
export function parseCount(value: string, flag: string): number {
  const count = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (/^[0-9]+$/.test(value) && !Number.isSafeInteger(count)) {
    throw new UsageError(`${flag} ${value} is too large (at most ${Number.MAX_SAFE_INTEGER}; leave ${flag} out for no limit)`);
  }
  if (!Number.isSafeInteger(count)) {
    throw new UsageError(`${flag} needs a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return count;
}

/** Parses a time limit (`--timeout 20m`): milliseconds, or a usage error naming the option. */
export function parseDurationOption(value: string, flag: string): number {
  const parsed = parseDuration(value);
  if (!parsed.ok) throw new UsageError(`${flag}: ${parsed.error}`);
  return parsed.ms;
}
