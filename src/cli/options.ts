import { parseDuration } from "../core/duration.js";
import { UsageError } from "../core/errors.js";
import type { ValueKind } from "../core/value-kinds.js";

/** Parses `-n <count>`: a non-negative integer written in plain decimal digits (spec §4.2). */
export function parseCount(value: string, flag: string): number {
  const count = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (/^[0-9]+$/.test(value) && !Number.isSafeInteger(count)) {
    throw new UsageError(`${flag} ${value} is too large (at most ${Number.MAX_SAFE_INTEGER})`);
  }
  if (!Number.isSafeInteger(count)) {
    throw new UsageError(`${flag} needs a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return count;
}

/** Parses `--max-cost <usd>`: dollars in plain decimal (`5`, `0.50`, `$5`), or a usage error naming the option. */
function parseUsd(value: string, flag: string): number {
  const usd = /^\$?[0-9]+(?:\.[0-9]+)?$/.test(value) ? Number(value.replace(/^\$/, "")) : Number.NaN;
  if (!Number.isFinite(usd)) throw new UsageError(`${flag} needs an amount of US dollars (5, 0.50), got ${JSON.stringify(value)}`);
  return usd;
}

/** Parses a time limit (`--timeout 20m`): milliseconds, or a usage error naming the option. */
export function parseDurationOption(value: string, flag: string): number {
  const parsed = parseDuration(value);
  if (!parsed.ok) throw new UsageError(`${flag}: ${parsed.error}`);
  return parsed.ms;
}

/**
 * The text of a run option (engine/options.ts RUN_OPTIONS) as the value its check takes, by the
 * kind of its value: a count, a duration in ms, dollars, a path; a usage error naming the option otherwise.
 */
export function parseOptionText(kind: ValueKind, text: string, flag: string): unknown {
  switch (kind) {
    case "count":
      return parseCount(text, flag);
    case "duration":
      return parseDurationOption(text, flag);
    case "usd":
      return parseUsd(text, flag);
    case "log-file":
      if (text === "") throw new UsageError(`${flag} needs a file path`);
      return text;
    case "command":
      if (text.trim() === "") throw new UsageError(`${flag} needs a command`);
      return text;
    default:
      return text;
  }
}
