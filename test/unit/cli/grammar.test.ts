/**
 * Every option is declared once, in its command class: the grammar, the help and the
 * completion read the class, so a fixture that only adds an option to a class (or adds a class) is
 * accepted, shown and listed with no other edit. Runs main() in-process with fixture commands.
 */
import { Command, Option } from "clipanion";
import { afterEach, describe, expect, it, vi } from "vitest";
import { commandSpec, loadCommandGroups, placeholder, type CommandGroups, type CommandSpec } from "../../../src/cli/command-spec.js";
import { COMMAND_GROUPS } from "../../../src/cli/commands/index.js";
import { LoopxCommand } from "../../../src/cli/context.js";
import { OutputCommand } from "../../../src/cli/commands/output.js";
import { VersionCommand } from "../../../src/cli/commands/version.js";
import { main } from "../../../src/cli/main.js";
import { flag, valueOption } from "../../../src/cli/declare.js";
import { UsageError } from "../../../src/core/errors.js";

/** `loopx output` plus one described option: it goes to the help's options table. */
class OutputWithIndent extends OutputCommand {
  indent = valueOption("--indent", "count", "Indent the JSON by <count> spaces (fixture)");
  override async execute(): Promise<number> {
    this.context.stdout.write(`${JSON.stringify({ result: this.result, indent: this.indent })}\n`);
    return 0;
  }
}

/** `loopx version` plus one flag without a description: it goes inline into the usage line. */
class VersionWithShort extends VersionCommand {
  short = flag("--short");
  override async execute(): Promise<number> {
    this.context.stdout.write(`short=${this.short}\n`);
    return 0;
  }
}

/** A command of its own. */
class HelloCommand extends LoopxCommand {
  static override paths = [["hello"]];
  static override usage = Command.Usage({ description: "Say hello (fixture)", details: "Greets someone.\n" });
  name = valueOption("--name", "text", "Who to greet");
  async execute(): Promise<number> {
    this.context.stdout.write(`hello ${this.name ?? "world"}\n`);
    return 0;
  }
}

const FIXTURES: CommandGroups = {
  ...COMMAND_GROUPS,
  output: async () => ({ name: "output", commands: [OutputWithIndent] }),
  version: async () => ({ name: "version", commands: [VersionWithShort] }),
  hello: async () => ({ name: "hello", commands: [HelloCommand] }),
};

/** Runs main() in-process: its exit code and what it wrote to stdout. */
async function loopx(argv: string[], groups: CommandGroups = COMMAND_GROUPS): Promise<{ code: number; stdout: string }> {
  let stdout = "";
  const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  try {
    return { code: await main(argv, groups), stdout };
  } finally {
    write.mockRestore();
  }
}

async function usageError(argv: string[], groups: CommandGroups = COMMAND_GROUPS): Promise<string> {
  const error = await loopx(argv, groups).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error, `loopx ${argv.join(" ")}`).toBeInstanceOf(UsageError);
  return (error as UsageError).message;
}

/** Every command's declarations, as the grammar, the help and the completion read them. */
async function specsOf(groups: CommandGroups): Promise<CommandSpec[]> {
  return (await loadCommandGroups(groups)).flatMap((group) => group.commands.map(commandSpec));
}

afterEach(() => vi.restoreAllMocks());

describe("an option added to a command class is accepted, shown and listed (no other edit)", () => {
  it("a described value option: the help lists it under Options, the grammar takes its value", async () => {
    const before = await loopx(["output", "-h"]);
    expect(before.stdout).not.toContain("--indent");
    const help = await loopx(["output", "-h"], FIXTURES);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(
      "Usage: loopx output [options] [--result <value>] [--result-file <path>] [--goto <target>] [--stop]\n\n" +
        "Prints structured output JSON for the loop to read; at least one flag is required.\n\n" +
        "--result-file <path> (loopx's own addition) takes the result from a file, or from stdin with -, as it is: for a result too big for an argument (Linux refuses one over 128 KiB: Argument list too long).\n\n" +
        "Options:\n  --indent <count>\n               Indent the JSON by <count> spaces (fixture)\n  -h, --help   Show this help\n",
    );
    expect(await loopx(["output", "--result", "x", "--indent", "2"], FIXTURES)).toEqual({ code: 0, stdout: '{"result":"x","indent":"2"}\n' });
    // The value is the next token verbatim, or follows "=".
    expect((await loopx(["output", "--indent", "-3"], FIXTURES)).stdout).toBe('{"indent":"-3"}\n');
    expect((await loopx(["output", "--indent=--stop"], FIXTURES)).stdout).toBe('{"indent":"--stop"}\n');
    expect(await usageError(["output", "--indent"], FIXTURES)).toBe("option --indent needs a value (see 'loopx output -h')");
    expect(await usageError(["output", "--indent", "1", "--indent", "2"], FIXTURES)).toBe("--indent given more than once");
    // -h after it is help; as its value it is the value.
    expect((await loopx(["output", "--indent", "1", "-h"], FIXTURES)).stdout).toBe(help.stdout);
    expect((await loopx(["output", "--indent", "-h"], FIXTURES)).stdout).toBe('{"indent":"-h"}\n');
    // Without the fixture the option does not exist.
    expect(await usageError(["output", "--indent", "2"])).toBe(`unknown option "--indent" for 'loopx output'`);
  });

  it("a flag without a description: shown inline in the usage lines, accepted once", async () => {
    const help = await loopx(["version", "--help"], FIXTURES);
    expect(help.stdout).toBe("Usage: loopx version [--short]\n\nPrints the loopx version.\n");
    expect((await loopx(["-h"], FIXTURES)).stdout).toMatch(/^ {2}version \[--short\] +Print the loopx version$/m);
    expect(await loopx(["version", "--short"], FIXTURES)).toEqual({ code: 0, stdout: "short=true\n" });
    expect(await loopx(["version"], FIXTURES)).toEqual({ code: 0, stdout: "short=false\n" });
    expect(await usageError(["version", "--short", "--short"], FIXTURES)).toBe("--short given more than once");
    expect(await usageError(["version", "--short=yes"], FIXTURES)).toBe(`unknown option "--short=yes" for 'loopx version'`);
  });

  it("a new command class: listed at top level, its own help, its grammar, its options at top level pointed to", async () => {
    const top = await loopx([], FIXTURES);
    expect(top.stdout).toMatch(/^ {2}hello \[options\] +Say hello \(fixture\)$/m);
    expect((await loopx(["--help"])).stdout).not.toContain("hello");
    expect((await loopx(["hello", "-h"], FIXTURES)).stdout).toBe(
      "Usage: loopx hello [options]\n\nGreets someone.\n\nOptions:\n  --name <value>\n               Who to greet\n  -h, --help   Show this help\n",
    );
    expect((await loopx(["hello", "--name", "you"], FIXTURES)).stdout).toBe("hello you\n");
    expect(await usageError(["hello", "there"], FIXTURES)).toBe(`unexpected argument "there" (usage: loopx hello [options])`);
    expect(await usageError(["--name", "x"], FIXTURES)).toBe(`unknown option "--name" (--name is an option of 'loopx hello': loopx hello --name <value>)`);
    expect(await usageError(["nope"], FIXTURES)).toMatch(/commands: run, version, output, env, install, init, runs, note, receipt, progress, otel, sandbox, completion, hello;/);
  });

  it("the declarations list what the classes declare, fixtures included", async () => {
    const specs = await specsOf(FIXTURES);
    expect(specs.find((command) => command.path.join(" ") === "output")!.options).toContainEqual({
      names: ["--indent"],
      value: "count",
      description: "Indent the JSON by <count> spaces (fixture)",
    });
    expect(specs.find((command) => command.path.join(" ") === "version")!.options).toEqual([{ names: ["--short"] }]);
    expect(specs.map((command) => command.path.join(" "))).toContain("hello");
  });
});

describe("an option declared with clipanion alone", () => {
  /** Parsed by clipanion, but the help, the grammar and the completion could not know it. */
  class Undeclared extends LoopxCommand {
    static override paths = [["undeclared"]];
    loud = Option.Boolean("--loud", false);
    async execute(): Promise<number> {
      return 0;
    }
  }

  it("is refused by name when the command's declarations are read", () => {
    expect(() => commandSpec(Undeclared)).toThrow("Undeclared.loud: declare options and arguments with cli/declare.ts");
  });
});

describe("the declarations of loopx's own commands", () => {
  it("lists every command with its options, value kinds and arguments", async () => {
    const specs = await specsOf(COMMAND_GROUPS);
    const byPath = new Map(specs.map((command) => [command.path.join(" "), command]));
    expect([...byPath.keys()]).toEqual(["run", "version", "output", "env set", "env remove", "env list", "install", "init", "runs", "runs show", "runs tail", "runs stop", "runs pause", "runs continue", "runs resume", "runs serve", "runs clean", "note", "receipt", "progress", "otel test", "sandbox show", "completion"]);
    const run = byPath.get("run")!;
    expect(run.options.map((option) => [option.names.join(","), option.value])).toEqual([
      ["-n", "count"],
      ["-e", "env-file"],
      ["--log", "log-file"],
      ["--timeout", "duration"],
      ["--max-time", "duration"],
      ["--on-end", "command"],
      ["--max-cost", "usd"],
      ["--count-estimates", undefined],
      ["--max-tokens", "count"],
      ["--stall-after", "count"],
      ["--worktree", undefined],
      ["--worktree-copy", "path"],
      ["--worktree-merge", undefined],
      ["--sandbox", undefined],
      ["--sandbox-allow", "sandbox-rule"],
      ["--summary", undefined],
    ]);
    expect(run.positionals).toEqual([{ name: "target", required: false, rest: true }]);
    expect(placeholder("target")).toBe("<workflow>[:<script>]");
    expect(byPath.get("install")!.options.map((option) => [option.names, option.value])).toEqual([
      [["-w", "--workflow"], "workflow"],
      [["-y"], undefined],
      [["--builtin"], undefined],
      [["--local"], undefined],
    ]);
    expect(byPath.get("output")!.options.map((option) => [option.names[0], option.value])).toEqual([
      ["--result", "text"],
      ["--result-file", "path"],
      ["--goto", "goto"],
      ["--stop", undefined],
    ]);
    expect(byPath.get("env set")).toMatchObject({ verbatim: true, positionals: [{ name: "variable", required: true }, { name: "text", required: true }] });
    expect(byPath.get("runs tail")).toMatchObject({ options: [{ names: ["--json"] }], positionals: [{ name: "run-id", required: false }] });
    expect(placeholder("run-id")).toBe("<id>");
    expect(byPath.get("runs stop")).toMatchObject({ options: [{ names: ["--now"] }], positionals: [{ name: "run-id", required: true }] });
    expect(byPath.get("runs resume")).toMatchObject({
      options: [{ names: ["-n"], value: "count" }, { names: ["--max-cost"], value: "usd" }, { names: ["--count-estimates"] }, { names: ["--max-tokens"], value: "count" }, { names: ["--stall-after"], value: "count" }, { names: ["--sandbox"] }, { names: ["--sandbox-allow"], value: "sandbox-rule" }],
      positionals: [{ name: "run-id", required: true }],
    });
    expect(byPath.get("runs serve")!.options.map((option) => [option.names[0], option.value])).toEqual([
      ["--port", "port"],
      ["--host", "address"],
      ["--open", undefined],
    ]);
  });
});
