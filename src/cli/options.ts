import { Option } from "clipanion";
import { parseDuration } from "../core/duration.js";
import { UsageError } from "../core/errors.js";

/**
 * What a value is, by meaning: its placeholder in the help, and (for the shell completion) what
 * may be offered for it. Option values get theirs from `valueOption`; positional arguments name
 * theirs as clipanion's `name` (`Option.String({ name: "run-id" })`).
 */
export const VALUE_KINDS = {
  count: "<count>", // a non-negative integer
  "env-file": "<path>", // an existing .env file
  "log-file": "<file>", // a file appended to
  duration: "<duration>", // 90, 1.5, 500ms, 1h30m
  workflow: "<name>", // a workflow's name
  variable: "<name>", // an environment variable's name
  text: "<value>", // anything
  goto: "<target>", // a goto target, not validated
  target: "<workflow>[:<script>]", // what `loopx run` runs
  source: "<source>", // what `loopx install` installs
  "run-id": "<id>", // a run record's id or a unique prefix of it
} as const;
export type ValueKind = keyof typeof VALUE_KINDS;

/** Where `valueOption` keeps the kind on clipanion's option declaration. */
export const VALUE_KIND = Symbol("loopx/value-kind");

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

/** Parses `-n <count>`: a non-negative integer written in plain decimal digits (spec §4.2). */
export function parseCount(value: string, flag: string): number {
  const count = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
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
