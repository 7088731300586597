import type { Command } from "clipanion";
import { UsageError } from "../core/errors.js";
import { argumentSynopsis, commandSpec, synopsis, type CommandGroup, type CommandSpec, type OptionSpec } from "./command-spec.js";
import type { LoopxContext } from "./context.js";
import { declaredEntries } from "./declare.js";

/**
 * The spec's option grammar (§4.2), for any command class, from its declarations alone:
 * - a value option takes the next token verbatim (`-n -1`, `--result --stop`, as getopt does) or
 *   the text after `=` (`--result=x`); a flag takes none;
 * - options and arguments in any order; after `--` every token is an argument;
 * - an unknown option, an option without its value, an option given twice, a missing or an extra
 *   argument is a usage error naming the token;
 * - a command with arguments but no options takes every token as an argument (verbatim).
 * The line is parsed once, here: what is accepted fills the command's declared fields
 * (commandFrom), so no second parser can read it differently or report an error of its own.
 */

export function isHelpFlag(token: string | undefined): boolean {
  return token === "-h" || token === "--help";
}

/** Finds the group's command that `args` name (`runs show ...`), and the arguments after its path. */
export function selectCommand(group: CommandGroup, args: string[]): { spec: CommandSpec; args: string[] } | "group-help" {
  const specs = group.commands.map(commandSpec);
  let best: CommandSpec | undefined;
  for (const spec of specs) {
    const sub = spec.path.slice(1);
    if (sub.every((token, i) => args[i] === token) && sub.length >= (best?.path.length ?? 1) - 1) best = spec;
  }
  if (best) return { spec: best, args: args.slice(best.path.length - 1) };
  if (isHelpFlag(args[0])) return "group-help";
  const forms = specs.map((spec) => [...spec.path.slice(1), ...argumentSynopsis(spec)].join(" "));
  const names = specs.map((spec) => spec.path.slice(1).join(" "));
  if (args[0] === undefined) throw new UsageError(`${group.name} needs a subcommand: ${orList(forms, ", ")}`);
  throw new UsageError(`unknown ${group.name} subcommand ${JSON.stringify(args[0])} (use ${orList(names, ", ")})`);
}

function orList(items: string[], separator: string): string {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(separator)} or ${items.at(-1)}`;
}

/** True if `args` ask for the command's help instead of running it (see CommandSpec). */
export function wantsHelp(spec: CommandSpec, args: string[]): boolean {
  if (spec.verbatim) return isHelpFlag(args[0]);
  for (let i = 0; i < args.length; i++) {
    const token = args[i]!;
    if (token === "--") return false;
    if (isHelpFlag(token)) return true;
    // An option's value is not an option, unless -h short-circuits everything.
    if (!spec.helpShortCircuits && optionNamed(spec, token)?.value) i++;
  }
  return false;
}

function optionNamed(spec: CommandSpec, name: string): OptionSpec | undefined {
  return spec.options.find((option) => option.names.includes(name));
}

/** A command line as the grammar read it: each option given, with its values in order, and the arguments. */
export interface ParsedArguments {
  /** `true` for a flag (or an "optional" option given bare), else the value. */
  options: Map<OptionSpec, Array<string | true>>;
  positionals: string[];
}

/** Checks `args` against the command's grammar and returns what they give, or throws a one-line usage error. */
export function parseArguments(spec: CommandSpec, args: string[]): ParsedArguments {
  const hint = spec.options.some((option) => option.description) ? ` (see 'loopx ${spec.path[0]} -h')` : "";
  const given = new Map<OptionSpec, Array<string | true>>();
  const duplicates: OptionSpec[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const token = args[i]!;
    if (spec.verbatim || !token.startsWith("-") || token === "-") {
      positionals.push(token);
      continue;
    }
    if (token === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    const equals = token.indexOf("=");
    const bound = equals > 0 ? optionNamed(spec, token.slice(0, equals)) : undefined;
    const option = bound?.value || bound?.form === "optional" ? bound : optionNamed(spec, token);
    if (!option) throw new UsageError(`unknown option ${JSON.stringify(token)} for 'loopx ${spec.path[0]}'${hint}`);
    let value: string | true = true;
    if (option === bound) value = token.slice(equals + 1);
    else if (option.value) {
      if (i + 1 >= args.length) throw new UsageError(`option ${token} needs a value${hint}`);
      value = args[++i]!;
    }
    if (given.has(option) && option.form !== "repeated") duplicates.push(option);
    given.set(option, [...(given.get(option) ?? []), value]);
  }
  checkArgumentCount(spec, positionals);
  if (duplicates.length > 0) throw new UsageError(`${duplicates[0]!.names.join("/")} given more than once`);
  return { options: given, positionals };
}

/**
 * A new instance of the command, its declared fields (declare.ts) filled from the parsed line: a
 * flag is whether it was given; a value option its value; an "optional" one true, its value or
 * false; a repeated one every value (or undefined); each argument in turn, a rest the remaining ones.
 */
export function commandFrom(spec: CommandSpec, parsed: ParsedArguments, context: LoopxContext): Command<LoopxContext> {
  const command = new spec.commandClass();
  command.context = context;
  command.path = [...spec.path];
  // This instance's fields come in the order commandSpec read from another instance of the class:
  // the n-th option here is spec.options[n], the key of what was parsed.
  let option = 0;
  let argument = 0;
  for (const [key, declared] of declaredEntries(command)) {
    if ("names" in declared) {
      const given = spec.options[option++]!;
      Reflect.set(command, key, optionValue(given, parsed.options.get(given)));
    } else {
      Reflect.set(command, key, declared.rest ? parsed.positionals.slice(argument) : parsed.positionals[argument]);
      argument++;
    }
  }
  return command;
}

function optionValue(option: OptionSpec, values: Array<string | true> | undefined): unknown {
  if (option.form === "repeated") return values;
  if (option.form === "optional") return values === undefined ? false : values.at(-1);
  if (option.value) return values?.at(-1);
  return values !== undefined;
}

function checkArgumentCount(spec: CommandSpec, positionals: string[]): void {
  const usage = `(usage: loopx ${synopsis(spec)})`;
  const rest = spec.positionals.findIndex((positional) => positional.rest);
  if (rest >= 0) {
    // The command checks the count of a rest itself, beyond the least it needs (`loopx note <text>...`).
    if (positionals.length < rest + (spec.positionals[rest]!.minimum ?? 0)) throw new UsageError(`missing argument ${argumentSynopsis(spec)[rest]} ${usage}`);
    return;
  }
  const required = spec.positionals.filter((positional) => positional.required).length;
  if (positionals.length > spec.positionals.length) {
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[spec.positionals.length])} ${usage}`);
  }
  if (positionals.length < required) {
    throw new UsageError(`missing argument ${argumentSynopsis(spec)[positionals.length]} ${usage}`);
  }
}
