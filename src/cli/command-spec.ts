import type { CommandClass } from "clipanion";
import { VALUE_KINDS, type ValueKind } from "../core/value-kinds.js";
import type { LoopxContext } from "./context.js";
import { declaredFields, type OptionSpec, type PositionalSpec } from "./declare.js";

export type { OptionSpec };

/**
 * A command class's declarations, read from the class itself: its path, its options and
 * positionals as loopx declared them (declare.ts), and its `static usage` texts. The
 * grammar (grammar.ts), the help (help-text.ts) and the completion (completion.ts) all read this
 * and nothing else, so an option is declared once: as a field of its command class.
 */
export interface CommandSpec {
  commandClass: LoopxCommandClass;
  /** e.g. ["runs", "show"] */
  path: string[];
  options: OptionSpec[];
  positionals: PositionalSpec[];
  /** One line for listings (top-level help, a group's help). */
  description?: string;
  /** The help's body, after the usage line. */
  details?: string;
  /** The help's text after the options table. */
  notes?: string;
  /** Examples for the command's own help: [what it does, the command line with `$0` for loopx]. */
  examples: Array<[string, string]>;
  /**
   * A command with arguments but no options takes every token as an argument, whatever it looks
   * like (`env set K -x` stores "-x"; `-h` as the first argument still asks for help).
   */
  verbatim: boolean;
  /**
   * `-h`/`--help` anywhere before `--` shows the help and nothing else is looked at, even where it
   * would be an option's value (spec §4.2 for run and install).
   */
  helpShortCircuits: boolean;
}

/** What loopx's command classes may declare besides clipanion's `paths` and `usage`. */
export interface LoopxCommandClass extends CommandClass<LoopxContext> {
  /** Help text after the options table (see CommandSpec.notes). */
  notes?: string;
  /** See CommandSpec.helpShortCircuits. */
  helpShortCircuits?: boolean;
}

/** A family of commands under one name (`env set|remove|list`, `runs [show|tail]`). */
export interface CommandGroup {
  name: string;
  commands: LoopxCommandClass[];
  /** Set: the top-level help lists the group as one row with this text; unset: one row per command. */
  description?: string;
  /** The group help's text after its usage lines. */
  details?: string;
}

/** The placeholder the help shows for a value of `kind` (a positional's name if not a kind). */
export function placeholder(kind: string): string {
  return kind in VALUE_KINDS ? VALUE_KINDS[kind as ValueKind] : `<${kind}>`;
}

const specs = new WeakMap<LoopxCommandClass, CommandSpec>();

export function commandSpec(commandClass: LoopxCommandClass): CommandSpec {
  const cached = specs.get(commandClass);
  if (cached) return cached;
  const { options, positionals } = declaredFields(new commandClass());
  const spec: CommandSpec = {
    commandClass,
    path: commandClass.paths?.[0] ?? [],
    options,
    positionals,
    description: commandClass.usage?.description,
    details: commandClass.usage?.details,
    notes: commandClass.notes,
    examples: commandClass.usage?.examples ?? [],
    verbatim: options.length === 0 && positionals.length > 0,
    helpShortCircuits: commandClass.helpShortCircuits === true,
  };
  specs.set(commandClass, spec);
  return spec;
}

/**
 * The command line a command accepts, without "loopx": path, `[options]` if it has described
 * options (listed in its help), positionals, then its other options inline. `compact` (the
 * top-level overview) shortens inline option values to their initial: `[--result <v>]`.
 */
export function synopsis(spec: CommandSpec, compact = false): string {
  const inline = spec.options.filter((option) => !option.description || option.inline).map((option) => optionSynopsis(option, compact));
  const listed = spec.options.some((option) => option.description && !option.inline) ? ["[options]"] : [];
  return [...spec.path, ...listed, ...argumentSynopsis(spec), ...inline].join(" ");
}

/** The positionals, e.g. `<name> <value>`, `[<id>]`. */
export function argumentSynopsis(spec: CommandSpec): string[] {
  return spec.positionals.map((positional) => (positional.required || positional.rest ? placeholder(positional.name) : `[${placeholder(positional.name)}]`));
}

/** An option with its value placeholder, e.g. `-w, --workflow <name>`. */
export function optionLabel(option: OptionSpec, separator = ", "): string {
  if (option.optionalKind) return `${option.names.join(separator)}[=${placeholder(option.optionalKind)}]`;
  return option.names.join(separator) + (option.value ? ` ${placeholder(option.value)}` : "");
}

function optionSynopsis(option: OptionSpec, compact: boolean): string {
  const label = optionLabel(option, "|");
  return `[${compact && option.value ? label.replace(/<(.)[^>]*>$/, "<$1>") : label}]`;
}

/**
 * The top-level commands, each group loaded only when asked for (commands/index.ts holds loopx's
 * own: COMMAND_GROUPS). The help and the completion take the groups as a parameter, so they do
 * not import the commands, which import them.
 */
export type CommandGroups = Record<string, () => Promise<CommandGroup>>;

/** Every command group, for the top-level help and the completion. */
export async function loadCommandGroups(groups: CommandGroups): Promise<CommandGroup[]> {
  return Promise.all(Object.values(groups).map((load) => load()));
}
