import { commandSpec, optionLabel, synopsis, type CommandGroup, type CommandSpec } from "./command-spec.js";

/**
 * Help texts (spec §11), rendered from the command classes: a command's usage line, options table
 * and texts come from its declarations (command-spec.ts), so an option added to a class shows up
 * here with no other edit.
 */

const TOP_LEVEL_INTRO = `loopx — run loops of scripts with structured output, goto and stop

Usage:
  loopx <command> [options]
  loopx -h | --help
`;
const TOP_LEVEL_OUTRO =
  "Start a project: 'loopx init', then 'loopx run main'.\nRun 'loopx run -h' to list the workflows in .loopx/, 'loopx install -h' for sources.\n" +
  "'loopx help <command>' (e.g. 'loopx help runs show') prints what '<command> -h' does.\n";

/** Rows wider than this put their description on the next line. */
const MAX_COLUMN = 40;

/**
 * Two columns: `label` indented by 2, descriptions from `column` on (multi-line ones aligned), a
 * label too wide for its column on a line of its own. Without a `column`, the widest label that
 * fits under MAX_COLUMN sets it, with `gap` spaces.
 */
function table(rows: Array<[label: string, description?: string]>, { column, gap = 3 }: { column?: number; gap?: number } = {}): string {
  const widths = rows.map(([label]) => 2 + label.length + gap).filter((width) => width <= MAX_COLUMN);
  const at = column ?? Math.max(0, ...widths);
  return rows
    .map(([label, description]) => {
      if (description === undefined) return `  ${label}\n`;
      const [first, ...more] = description.split("\n").map((line) => `${" ".repeat(at)}${line}\n`);
      const head = 2 + label.length + 1 <= at ? `  ${label}`.padEnd(at) + first!.slice(at) : `  ${label}\n${first}`;
      return head + more.join("");
    })
    .join("");
}

/**
 * The options table of a command's help: its described options, then -h. The column is set by
 * the options with a short name (the spec's); longer loopx-only options wrap.
 */
function optionsTable(spec: CommandSpec, subcommand = false): string {
  const rows: Array<[string, string]> = spec.options.filter((option) => option.description).map((option) => [optionLabel(option), option.description!]);
  const short = rows.filter(([label]) => /^-[^-]/.test(label)).map(([label]) => 2 + label.length + 3);
  rows.push(["-h, --help", "Show this help"]);
  // A subcommand without a short option of its own: the widest label that fits sets the column.
  return `Options:\n${table(rows, subcommand && short.length === 0 ? {} : { column: Math.max(...short, 2 + "-h, --help".length + 3) })}`;
}

/** `loopx <command> -h` for a command on its own (run, version, output, install) or a subcommand (`runs show`). */
function commandHelp(spec: CommandSpec, group?: string): string {
  const sections = [`Usage: loopx ${synopsis(spec)}\n`];
  // A subcommand has no body of its own: the line the listings show says what it does.
  const body = spec.details ?? (group !== undefined && spec.description ? `${spec.description}.\n` : undefined);
  if (body) sections.push(body);
  if (spec.options.some((option) => option.description) || group !== undefined) sections.push(optionsTable(spec, group !== undefined));
  if (spec.notes) sections.push(spec.notes);
  if (spec.examples.length > 0) sections.push(examples(spec.examples));
  if (group !== undefined) sections.push(`More in 'loopx ${group} -h'.\n`);
  return sections.join("\n");
}

/** `Examples:`, each command line under its comment. */
function examples(list: Array<[string, string]>): string {
  return `Examples:\n${list.map(([what, line]) => `  # ${what}\n  ${line.replace(/^\$0\b/, "loopx")}\n`).join("")}`;
}

/**
 * `loopx <group> -h` for a family of commands (env, runs): a usage line per command, with its
 * description if the top-level help did not already show it (a group listed as one row there).
 */
function groupHelp(group: CommandGroup): string {
  const rows = group.commands.map(commandSpec).map((spec): [string, string?] => [`loopx ${synopsis(spec)}`, group.description ? spec.description : undefined]);
  return [`Usage:\n${table(rows, { gap: 2 })}`, ...(group.details ? [group.details] : [])].join("\n");
}

/**
 * The help a command's `-h` shows: a command on its own, a subcommand (`runs show`, `env set`)
 * and the bare command of a family (`runs`, whose help is the family's) each their own.
 */
export function helpFor(group: CommandGroup, spec?: CommandSpec): string {
  if (group.commands.length === 1) return commandHelp(commandSpec(group.commands[0]!));
  return spec !== undefined && spec.path.length > 1 ? commandHelp(spec, group.name) : groupHelp(group);
}

/** `loopx -h`: every command, a group with a description as one row. */
export function topLevelHelp(groups: CommandGroup[]): string {
  const rows: Array<[string, string?]> = [];
  for (const group of groups) {
    const specs = group.commands.map(commandSpec);
    if (group.description !== undefined && specs.length > 1) {
      // The group's row covers the commands that take the bare command's options (`runs show`,
      // `runs tail` take --json as `runs` does); one with options of its own gets a row of its own.
      const shared = options(specs[0]!);
      const family = specs.filter((spec) => shared.every((option) => options(spec).includes(option)));
      rows.push([groupSynopsis(group.name, family), group.description]);
      for (const spec of specs.filter((spec) => !family.includes(spec))) rows.push([synopsis(spec, true), spec.description]);
    } else for (const spec of specs) rows.push([synopsis(spec, true), spec.description]);
  }
  return `${TOP_LEVEL_INTRO}\nCommands:\n${table(rows)}\n${TOP_LEVEL_OUTRO}`;
}

/** The options a command's synopsis names, e.g. `[--json]`. */
function options(spec: CommandSpec): string[] {
  return synopsis(spec).split(" ").filter((word) => word.startsWith("[-"));
}

/**
 * One line for a group whose bare command takes alternatives, e.g.
 * `runs [show <id> | tail [<id>]] [--json]` (options every command shares come last).
 */
function groupSynopsis(name: string, specs: CommandSpec[]): string {
  // Words, a bracketed option with its value (`[--limit <c>]`) being one.
  const lines = specs.map((spec) => (synopsis(spec, true).match(/\[[^\]]*\]|\S+/g) ?? []).slice(1));
  const shared = lines[0]!.filter((word) => word.startsWith("[-") && lines.every((line) => line.includes(word)));
  const forms = lines.map((line) => line.filter((word) => !shared.includes(word)).join(" ")).filter(Boolean);
  const bare = forms.length < specs.length;
  const alternatives = forms.length ? [bare ? `[${forms.join(" | ")}]` : `(${forms.join(" | ")})`] : [];
  return [name, ...alternatives, ...shared].join(" ");
}
