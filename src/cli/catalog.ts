import { commandSpec, loadCommandGroups, placeholder, type CommandGroups, type ValueKind } from "./command-spec.js";

/**
 * Every command with its options and arguments, read from the command classes (for the shell
 * completion and anything else that must know loopx's command line). `-h`/`--help` is accepted
 * by every command and at top level and is not listed.
 */
export interface CatalogCommand {
  /** e.g. ["runs", "show"] */
  path: string[];
  description?: string;
  options: Array<{ names: string[]; /** absent: a flag */ value?: { kind: ValueKind; placeholder: string }; description?: string }>;
  arguments: Array<{ kind: string; placeholder: string; required: boolean; /** takes the rest of the line */ rest: boolean }>;
  /** Every token after the path is an argument, even one starting with "-". */
  verbatim: boolean;
}

export async function commandCatalog(groups: CommandGroups): Promise<CatalogCommand[]> {
  return (await loadCommandGroups(groups)).flatMap((group) =>
    group.commands.map(commandSpec).map((spec) => ({
      path: spec.path,
      description: spec.description,
      options: spec.options.map(({ names, value, description }) => ({
        names,
        ...(value ? { value: { kind: value, placeholder: placeholder(value) } } : {}),
        ...(description ? { description } : {}),
      })),
      arguments: spec.positionals.map(({ name, required, rest }) => ({ kind: name, placeholder: placeholder(name), required, rest })),
      verbatim: spec.verbatim,
    })),
  );
}
