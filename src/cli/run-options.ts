import { Option } from "clipanion";
import { UsageError } from "../core/errors.js";
import { placeholder } from "./command-spec.js";
import { RUN_OPTIONS, type RunOptionValues } from "../engine/options.js";
import { parseOptionText, valueOption } from "./options.js";

/**
 * The run options table (engine/options.ts RUN_OPTIONS) as a command's fields: `loopx run` gets
 * every option with a CLI name (described: the help lists them), `loopx runs resume` those marked
 * `resume` (inline in its usage line). Call from the command's constructor, before its positionals.
 */
export function declareRunOptions(command: object, resume = false): void {
  const fields = command as Record<string, unknown>;
  for (const { name, cli } of RUN_OPTIONS) {
    if (!cli || (resume && !cli.resume)) continue;
    const description = resume ? undefined : cli.description;
    fields[name] = cli.kind ? valueOption(cli.names, cli.kind, description) : Option.Boolean(cli.names, false, { description });
  }
}

/**
 * The run options given on the command line, parsed by the kind of their value (a usage error names
 * the option); an option that needs another says so in the CLI's words (not on a resume: the run
 * recorded the other one).
 */
export function givenRunOptions(command: object, resume = false): RunOptionValues {
  const fields = command as Record<string, string | boolean | undefined>;
  const given: Record<string, unknown> = {};
  for (const { name, cli } of RUN_OPTIONS) {
    const value = cli && (!resume || cli.resume) ? fields[name] : undefined;
    if (value === undefined || value === false) continue;
    given[name] = typeof value === "string" && cli?.kind ? parseOptionText(cli.kind, value, cli.names) : value;
  }
  for (const option of resume ? [] : RUN_OPTIONS) {
    const other = "requires" in option ? RUN_OPTIONS.find((o) => o.name === option.requires) : undefined;
    if (other?.cli && option.cli && given[option.name] !== undefined && given[other.name] === undefined) {
      throw new UsageError(`${option.cli.names} needs ${other.cli.names}${other.cli.kind ? ` ${placeholder(other.cli.kind)}` : ""}`);
    }
  }
  return given;
}

/**
 * `loopx run --timeout main`: the target was taken as an option's value, so what is missing is the
 * value (the duration, the count), not the target; the line names it.
 */
export function missingTargetLine(command: object): string {
  const fields = command as Record<string, string | boolean | undefined>;
  for (const { name, cli } of RUN_OPTIONS) {
    const value = fields[name];
    if (!cli?.kind || !cli.example || typeof value !== "string") continue;
    try {
      parseOptionText(cli.kind, value, cli.names);
    } catch {
      return `${cli.names} needs ${cli.example}: it took ${JSON.stringify(value)} as its value, and loopx run has no target (loopx run ${cli.names} <value> <workflow>[:<script>])`;
    }
  }
  return "loopx run needs a target: loopx run <workflow>[:<script>]";
}
