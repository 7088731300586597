import { LoopxError, UsageError } from "../core/errors.js";
import { shownText } from "../core/untrusted-text.js";
import { stderrLine, warnToStderr } from "../os/stderr.js";
import { argumentSynopsis, commandSpec, loadCommandGroups, optionLabel, type CommandGroups } from "./command-spec.js";
import { COMMAND_GROUPS } from "./commands/index.js";
import { type LoopxContext, processContext } from "./context.js";
import { commandFrom, isHelpFlag, parseArguments, selectCommand, wantsHelp } from "./grammar.js";

/**
 * A token that is not a command at top level: `-h`/`--help` is the only top-level option (§4.2);
 * the message points to where the option lives (`loopx run -n ...`, `loopx version`).
 */
async function topLevelOptionError(token: string, groups: CommandGroups): Promise<UsageError> {
  if (token === "--version" || token === "-v" || token === "-V") {
    return new UsageError(`unknown option ${JSON.stringify(token)} (the only top-level option is -h; to print the version: loopx version)`);
  }
  for (const group of await loadCommandGroups(groups)) {
    for (const spec of group.commands.map(commandSpec)) {
      const option = spec.options.find((candidate) => candidate.names.includes(token));
      if (option) {
        const example = [`loopx ${spec.path.join(" ")}`, optionLabel({ ...option, names: [token] }), ...argumentSynopsis(spec)].join(" ");
        return new UsageError(`unknown option ${JSON.stringify(token)} (${token} is an option of 'loopx ${spec.path.join(" ")}': ${example})`);
      }
    }
  }
  return new UsageError(`unknown option ${JSON.stringify(token)} (the only top-level option is -h)`);
}

/**
 * `loopx help [<command>...]` (loopx's own addition): the arguments that print the same help,
 * `<command>... -h`; words that name no command are a usage error, as `loopx <word>` is.
 */
async function helpArguments(words: string[], groups: CommandGroups): Promise<string[]> {
  if (words.length === 0) return ["-h"];
  const [name, ...sub] = words as [string, ...string[]];
  if (!Object.hasOwn(groups, name)) {
    throw new UsageError(`no command ${JSON.stringify(name)} to show help for (commands: ${Object.keys(groups).join(", ")})`);
  }
  const paths = (await groups[name]!()).commands.map((command) => commandSpec(command).path.join(" "));
  const asked = words.join(" ");
  if (sub.length > 0 && !paths.includes(asked)) throw new UsageError(`no command "loopx ${asked}" to show help for (${name}: ${paths.join(", ")})`);
  return [...words, "-h"];
}

/**
 * The spec's grammar (§4, §11, §12): top-level `-h` first, no implicit `run`, every other flag at
 * top level an error; then the command's own grammar (grammar.ts) and help, from its class.
 * `groups`: the commands (tests add a fixture command); `context`: what commands work with
 * (cli/context.ts; the process's own unless a caller gives another).
 */
export async function main(argv: string[], groups: CommandGroups = COMMAND_GROUPS, context: LoopxContext = processContext(argv)): Promise<number> {
  if (argv.length === 0 || isHelpFlag(argv[0])) {
    const { topLevelHelp } = await import("./help-text.js");
    context.stdout.write(topLevelHelp(await loadCommandGroups(groups)));
    return 0;
  }
  const [command, ...args] = argv as [string, ...string[]];
  if (command.startsWith("-")) throw await topLevelOptionError(command, groups);
  // The completion scripts' question (completion.ts); never listed, as no user types it.
  if (command === "__complete") {
    const { complete } = await import("./completion.js");
    context.stdout.write(await complete(args[0] ?? "", groups, context.cwd, context.env));
    return 0;
  }
  if (command === "help") return main(await helpArguments(args, groups), groups, context);
  if (!Object.hasOwn(groups, command)) {
    throw new UsageError(`unknown command ${JSON.stringify(command)} (commands: ${Object.keys(groups).join(", ")}; to run a workflow: loopx run <workflow>)`);
  }
  const group = await groups[command]!();
  const selected = selectCommand(group, args);
  if (selected === "group-help" || wantsHelp(selected.spec, selected.args)) {
    const { helpFor } = await import("./help-text.js");
    let help = helpFor(group, selected === "group-help" ? undefined : selected.spec);
    if (command === "run") help = (await import("./help.js")).runHelp(help, context.cwd, warnToStderr);
    context.stdout.write(help);
    return 0;
  }
  const { spec, args: rest } = selected;
  const code = await commandFrom(spec, parseArguments(spec, rest), context).execute();
  return typeof code === "number" ? code : 0;
}

/** Runs the CLI and maps every error to one stderr line and its exit code (never a stack trace). */
export async function runCli(argv: string[]): Promise<void> {
  try {
    process.exitCode = await main(argv);
  } catch (error) {
    const message = error instanceof LoopxError ? error.message : `internal error: ${error instanceof Error ? error.message : String(error)}`;
    // A failure the progress summary already told (with its reason) is not told twice.
    if (!(error instanceof LoopxError && error.reported)) stderrLine(`loopx: ${shownText(message)}`); // it may quote what a script wrote
    process.exitCode = error instanceof LoopxError ? error.exitCode : 1;
  }
}
