import { Cli, type CommandClass } from "clipanion";
import { LoopxError, UsageError } from "../core/errors.js";
import { stderrLine, warnToStderr } from "../runtime/stderr.js";
import { COMMAND_USAGE, INSTALL_HELP, TOP_LEVEL_HELP } from "./help-text.js";

/**
 * Each subcommand's clipanion command classes, loaded only when that subcommand runs: start-up
 * of `loopx version` / `loopx output` must not pay for discovery, the engine or install code.
 */
const COMMANDS: Record<string, () => Promise<CommandClass[]>> = {
  run: async () => [(await import("./commands/run.js")).RunCommand],
  version: async () => [(await import("./commands/version.js")).VersionCommand],
  output: async () => [(await import("./commands/output.js")).OutputCommand],
  env: async () => {
    const env = await import("./commands/env.js");
    return [env.EnvSetCommand, env.EnvRemoveCommand, env.EnvListCommand];
  },
  install: async () => [(await import("./commands/install.js")).InstallCommand],
  init: async () => [(await import("./commands/init.js")).InitCommand],
  runs: async () => {
    const runs = await import("./commands/runs.js");
    return [runs.RunsListCommand, runs.RunsShowCommand, runs.RunsTailCommand];
  },
};
const SUBCOMMANDS = Object.keys(COMMANDS);

/** An option a subcommand accepts, as its clipanion command class declares it. */
export interface OptionGrammar {
  /** Value options: each takes the next token verbatim (`-n 5`, `--result -x`). */
  value: string[];
  /** Options that take no value (counters, booleans). */
  flag: string[];
}

/**
 * The options `commands` declare, read from clipanion's own definitions of the registered classes:
 * every option is declared once, in its command class (with a description; clipanion lists
 * described options only). Adding an option to a command class is all the dispatcher needs.
 */
export function optionGrammar(commands: CommandClass[]): OptionGrammar {
  const grammar: OptionGrammar = { value: [], flag: [] };
  for (const definition of createCli(commands).definitions()) {
    for (const option of definition.options) {
      // "-w,--workflow #0": the names, then one "#<n>" per value the option takes.
      const [names, ...values] = option.definition.split(" ");
      (values.length > 0 ? grammar.value : grammar.flag).push(...names!.split(","));
    }
  }
  return grammar;
}

const ENV_USAGE: Record<string, string> = {
  set: "loopx env set <name> <value>",
  remove: "loopx env remove <name>",
  list: "loopx env list",
};

function isHelpFlag(token: string): boolean {
  return token === "-h" || token === "--help";
}

/** True if `-h`/`--help` appears as an option anywhere (before a `--`). */
function hasHelpFlag(args: string[]): boolean {
  for (const token of args) {
    if (token === "--") return false;
    if (isHelpFlag(token)) return true;
  }
  return false;
}

/**
 * Makes an option's value the next token verbatim, as getopt does, so `--result "-5"` or
 * `-n -1` reach validation instead of being mistaken for options: clipanion only accepts a
 * dash-leading value in the `--flag=value` form.
 */
function attachOptionValues(args: string[], valueOptions: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const token = args[i]!;
    if (token === "--") {
      out.push(...args.slice(i));
      break;
    }
    if (valueOptions.includes(token) && i + 1 < args.length) {
      out.push(`${token}=${args[++i]}`);
    } else {
      out.push(token);
    }
  }
  return out;
}

/**
 * Rejects unknown options and value options missing their value, naming the token, wherever it
 * stands on the line (clipanion reports some of these only as "command not found").
 */
function checkOptions(command: string, args: string[], { value, flag }: OptionGrammar): void {
  const hint = command === "run" || command === "install" ? ` (see 'loopx ${command} -h')` : "";
  for (const token of args) {
    if (token === "--") return;
    if (!token.startsWith("-") || token === "-") continue;
    if (value.includes(token)) throw new UsageError(`option ${token} needs a value${hint}`);
    if (flag.includes(token) || value.some((option) => token.startsWith(`${option}=`))) continue;
    throw new UsageError(`unknown option ${JSON.stringify(token)} for 'loopx ${command}'${hint}`);
  }
}

/** Rewrites clipanion's multi-line parse errors as one line that names what is wrong. */
function usageErrorFrom(error: Error, command: string): UsageError {
  const first = error.message.split("\n")[0]!.trim();
  const hint = command === "run" || command === "install" ? ` (see 'loopx ${command} -h')` : "";
  let match: RegExpMatchArray | null;
  if ((match = first.match(/^(?:Unsupported|Invalid) option name \("(.*)"\)/))) {
    return new UsageError(`unknown option ${JSON.stringify(match[1])} for 'loopx ${command}'${hint}`);
  }
  if ((match = first.match(/^Not enough arguments to option (\S+?)\.?$/))) {
    return new UsageError(`option ${match[1]} needs a value${hint}`);
  }
  if ((match = first.match(/^Extraneous positional argument \("(.*)"\)/))) {
    return new UsageError(`unexpected argument ${JSON.stringify(match[1])} for 'loopx ${command}'${hint}`);
  }
  if (first.startsWith("Not enough positional arguments")) {
    return new UsageError(`missing argument for 'loopx ${command}'${hint}`);
  }
  if (first.startsWith("Command not found")) {
    return new UsageError(`invalid arguments for 'loopx ${command}'${hint || " (see 'loopx -h')"}`);
  }
  return new UsageError(first.replace(/\.$/, ""));
}

/**
 * `env` takes a subcommand and positionals only; names and values are positional whatever they
 * look like (`env set K -x` stores "-x"), so the arity is checked here with a precise message.
 */
function envArguments(args: string[]): string[] {
  const [sub, ...positionals] = args;
  if (sub === undefined) throw new UsageError("env needs a subcommand: set <name> <value>, remove <name> or list");
  const arity = { set: 2, remove: 1, list: 0 }[sub];
  if (arity === undefined) throw new UsageError(`unknown env subcommand ${JSON.stringify(sub)} (use set, remove or list)`);
  if (positionals.length !== arity) {
    const problem = positionals.length < arity ? "missing argument" : `unexpected argument ${JSON.stringify(positionals[arity])}`;
    throw new UsageError(`${problem} (usage: ${ENV_USAGE[sub]})`);
  }
  return [sub, "--", ...positionals];
}

function createCli(commands: CommandClass[]): Cli {
  const cli = new Cli({ binaryLabel: "loopx", binaryName: "loopx", enableCapture: false, enableColors: false });
  for (const command of commands) cli.register(command);
  return cli;
}

/**
 * The spec's grammar (§4, §11, §12) on top of clipanion: top-level `-h` and the `run`/`install`
 * `-h` short-circuits are decided here, before clipanion parses anything, because they must
 * ignore everything else on the line; no implicit `run`; every other flag at top level is an error.
 */
export async function main(argv: string[]): Promise<number> {
  const stdout = process.stdout;
  if (argv.length === 0 || isHelpFlag(argv[0]!)) {
    stdout.write(TOP_LEVEL_HELP);
    return 0;
  }
  const [command, ...args] = argv as [string, ...string[]];
  if (command.startsWith("-")) {
    const hint = command === "-n" || command === "-e" ? ` (${command} is a run option: loopx run ${command} <value> <workflow>)` : " (the only top-level option is -h)";
    throw new UsageError(`unknown option ${JSON.stringify(command)}${hint}`);
  }
  if (!SUBCOMMANDS.includes(command)) {
    throw new UsageError(`unknown command ${JSON.stringify(command)} (commands: ${SUBCOMMANDS.join(", ")}; to run a workflow: loopx run <workflow>)`);
  }
  if (command === "run" && hasHelpFlag(args)) {
    const { runHelp } = await import("./help.js");
    stdout.write(runHelp(process.cwd(), warnToStderr));
    return 0;
  }
  if (command === "install" && hasHelpFlag(args)) {
    stdout.write(INSTALL_HELP);
    return 0;
  }
  const commands = await COMMANDS[command]!();
  const grammar = optionGrammar(commands);
  let rest = attachOptionValues(args, grammar.value);
  if (command === "env" && !isHelpFlag(rest[0] ?? "")) {
    rest = envArguments(rest);
  } else if (hasHelpFlag(rest)) {
    stdout.write(COMMAND_USAGE[command] ?? TOP_LEVEL_HELP);
    return 0;
  }
  checkOptions(command, rest, grammar);

  const cli = createCli(commands);
  let parsed;
  try {
    parsed = cli.process([command, ...rest]);
  } catch (error) {
    throw usageErrorFrom(error as Error, command);
  }
  parsed.context = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, colorDepth: 1 };
  const code = await parsed.execute();
  return typeof code === "number" ? code : 0;
}

/** Runs the CLI and maps every error to one stderr line and its exit code (never a stack trace). */
export async function runCli(argv: string[]): Promise<void> {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  });
  try {
    process.exitCode = await main(argv);
  } catch (error) {
    const message = error instanceof LoopxError ? error.message : `internal error: ${error instanceof Error ? error.message : String(error)}`;
    if (!(error instanceof LoopxError && error.reported)) stderrLine(`loopx: ${message}`);
    process.exitCode = error instanceof LoopxError ? error.exitCode : 1;
  }
}
