import { Command, Option } from "clipanion";
import type { ValueKind } from "../core/value-kinds.js";

/**
 * The one declaration of a command's options and arguments: each is a field of its command class,
 * made by a function here, which marks the field as clipanion's option and keeps loopx's own
 * description of it (names, kind of value, help text). The grammar (which parses the line once and
 * fills the fields), the help and the completion read loopx's description (command-spec.ts).
 */

export interface OptionSpec {
  /** e.g. ["-w", "--workflow"] */
  names: string[];
  /** The kind of the option's value; undefined for a flag (no value) and an "optional" one (see optionalKind). */
  value?: ValueKind;
  description?: string;
  /**
   * "optional": a flag that may carry a value after `=` (`--worktree`, `--worktree=<name>`);
   * "repeated": a value option that may be given more than once (`--worktree-copy a --worktree-copy b`).
   */
  form?: "optional" | "repeated";
  /** For "optional": the kind of its value. */
  optionalKind?: ValueKind;
  /**
   * Described (listed in its command's own help) and still shown inline in usage lines: the
   * options of a subcommand, whose group help and the top-level help show its whole command line.
   */
  inline?: boolean;
}

export interface PositionalSpec {
  /** The kind of value (a key of VALUE_KINDS), or another name for its placeholder. */
  name: string;
  required: boolean;
  /** Takes every remaining argument (the command checks how many it got, beyond `minimum`). */
  rest: boolean;
  /** For a rest: how many arguments it needs at least. */
  minimum?: number;
}

/** loopx's description of each declared field, by the object clipanion keeps for it. */
const described = new WeakMap<object, OptionSpec | PositionalSpec>();

function describe<T>(declaration: T, spec: OptionSpec | PositionalSpec): T {
  if (typeof declaration === "object" && declaration !== null) described.set(declaration, spec);
  return declaration;
}

const namesOf = (names: string) => names.split(",");

/**
 * A flag (no value). One with a description is listed under "Options:" in its command's help; one
 * without is shown inline in the usage line.
 */
export function flag(names: string, description?: string): boolean {
  return describe(Option.Boolean(names, false, { description }), { names: namesOf(names), description });
}

/**
 * An option that takes one value, of `kind`. The value is the next token verbatim (`-n -1`,
 * `--result --stop`) or follows `=`; giving the option twice is a usage error (grammar.ts).
 */
export function valueOption(names: string, kind: ValueKind, description?: string): string | undefined {
  return describe(Option.String(names, { description }), { names: namesOf(names), value: kind, description });
}

/** A flag that may carry a value after `=` (`--worktree`, `--worktree=<name>`): true, the value, or undefined. */
export function optionalValueOption(name: string, kind: ValueKind, description: string): string | boolean | undefined {
  const option = Option.String(name, false, { tolerateBoolean: true, description });
  return describe(option, { names: namesOf(name), description, form: "optional", optionalKind: kind });
}

/** A value option that may be given more than once: every value, in order. */
export function repeatedOption(name: string, kind: ValueKind, description: string): string[] | undefined {
  return describe(Option.Array(name, { description }), { names: namesOf(name), value: kind, description, form: "repeated" });
}

/** One argument, whose placeholder is `kind`'s (or `<kind>`); required unless `required: false`. */
export function positional(kind: string, options?: { required: true }): string;
export function positional(kind: string, options: { required: false }): string | undefined;
export function positional(kind: string, { required = true }: { required?: boolean } = {}): string | undefined {
  return describe(Option.String({ name: kind, required }), { name: kind, required, rest: false });
}

/** Every remaining argument (`minimum`: at least that many, which the grammar checks). */
export function rest(kind: string, minimum = 0): string[] {
  return describe(Option.Rest({ name: kind, required: minimum }), { name: kind, required: false, rest: true, ...(minimum > 0 ? { minimum } : {}) });
}

/**
 * `declaration` (an option field's value), described for its command's own help and still shown
 * inline in usage lines (a subcommand's options: see OptionSpec.inline).
 */
export function shownInline<T>(declaration: T): T {
  const spec = typeof declaration === "object" && declaration !== null ? described.get(declaration) : undefined;
  if (!spec || !("names" in spec)) throw new Error("shownInline takes an option made by cli/declare.ts");
  spec.inline = true;
  return declaration;
}

/** A subcommand's flag: described in its own help, inline in its group's help and the top-level help. */
export function inlineFlag(names: string, description: string): boolean {
  return shownInline(flag(names, description));
}

/** A subcommand's value option, described and inline as inlineFlag's. */
export function inlineValue(names: string, kind: ValueKind, description: string): string | undefined {
  return shownInline(valueOption(names, kind, description));
}

/**
 * The options and positionals `instance` declares, in the order of its fields. A clipanion option
 * field that was not made here is a mistake in loopx (its help could not show it, the grammar
 * could not fill it).
 */
export function declaredFields(instance: object): { options: OptionSpec[]; positionals: PositionalSpec[] } {
  const options: OptionSpec[] = [];
  const positionals: PositionalSpec[] = [];
  for (const [, spec] of declaredEntries(instance)) {
    if ("names" in spec) options.push(spec);
    else positionals.push(spec);
  }
  return { options, positionals };
}

/** `instance`'s declared fields in the order of its fields: [property name, its description]. */
export function declaredEntries(instance: object): Array<[string, OptionSpec | PositionalSpec]> {
  const entries: Array<[string, OptionSpec | PositionalSpec]> = [];
  for (const [key, value] of Object.entries(instance)) {
    if (typeof value !== "object" || value === null || !(Command.isOption in value)) continue;
    const spec = described.get(value);
    if (!spec) throw new Error(`${instance.constructor.name}.${key}: declare options and arguments with cli/declare.ts`);
    entries.push([key, spec]);
  }
  return entries;
}
