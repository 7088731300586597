import type { CommandGroup, CommandGroups } from "../command-spec.js";

/**
 * The top-level commands in the order the help lists them. Each group's module loads only when
 * that command runs: start-up of `loopx version` / `loopx output` must not pay for discovery, the
 * engine or install code.
 */
export const COMMAND_GROUPS: CommandGroups = {
  run: async () => oneCommand("run", (await import("./run.js")).RunCommand),
  version: async () => oneCommand("version", (await import("./version.js")).VersionCommand),
  output: async () => oneCommand("output", (await import("./output.js")).OutputCommand),
  env: async () => (await import("./env.js")).ENV_COMMANDS,
  install: async () => oneCommand("install", (await import("./install.js")).InstallCommand),
  init: async () => oneCommand("init", (await import("./init.js")).InitCommand),
  runs: async () => (await import("./runs.js")).RUNS_COMMANDS,
  note: async () => oneCommand("note", (await import("./note.js")).NoteCommand),
  receipt: async () => oneCommand("receipt", (await import("./receipt.js")).ReceiptCommand),
  progress: async () => oneCommand("progress", (await import("./progress.js")).ProgressCommand),
  otel: async () => (await import("./otel.js")).OTEL_COMMANDS,
  sandbox: async () => (await import("./sandbox.js")).SANDBOX_COMMANDS,
  completion: async () => oneCommand("completion", (await import("./completion.js")).CompletionCommand),
};

function oneCommand(name: string, command: CommandGroup["commands"][number]): CommandGroup {
  return { name, commands: [command] };
}
