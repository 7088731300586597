import { Option } from "clipanion";
import { parseDuration } from "../core/duration.js";
import { UsageError } from "../core/errors.js";
import { SHOWN_INLINE, VALUE_FORM, VALUE_KIND, type ValueKind } from "./command-spec.js";

/**
 * An option that takes one value: clipanion's `Option.String` plus the kind of its value. The
 * value is the next token verbatim (`-n -1`, `--result --stop`) or follows `=`; giving the option
 * twice is a usage error (grammar.ts). An option with a description is listed under "Options:" in
 * its command's help; one without is shown inline in the usage line.
 */
export function valueOption(names: string, kind: ValueKind, description?: string): string | undefined {
  const option = Option.String(names, { description }) as unknown as Record<symbol, unknown>;
  option[VALUE_KIND] = kind;
  return option as unknown as string | undefined;
}

/**
 * `declaration` (an option field's value), described for its command's own help and still shown
 * inline in usage lines (a subcommand's options: see OptionSpec.inline).
 */
export function shownInline<T>(declaration: T): T {
  (declaration as unknown as Record<symbol, unknown>)[SHOWN_INLINE] = true;
  return declaration;
}

/** A flag that may carry a value after `=` (`--worktree`, `--worktree=<name>`): true, the value, or undefined. */
export function optionalValueOption(name: string, kind: ValueKind, description: string): string | boolean | undefined {
  const option = Option.String(name, false, { tolerateBoolean: true, description }) as unknown as Record<symbol, unknown>;
  option[VALUE_KIND] = kind;
  option[VALUE_FORM] = "optional";
  return option as unknown as string | boolean | undefined;
}

/** A value option that may be given more than once: every value, in order. */
export function repeatedOption(name: string, kind: ValueKind, description: string): string[] | undefined {
  const option = Option.Array(name, { description }) as unknown as Record<symbol, unknown>;
  option[VALUE_KIND] = kind;
  option[VALUE_FORM] = "repeated";
  return option as unknown as string[] | undefined;
}

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
