/**
 * The command line is parsed once (issue 39, item 5): the grammar reads it and fills the
 * command's declared fields itself; clipanion's own parser never reads it again.
 */
import { Cli, Command } from "clipanion";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CommandGroups } from "../../../src/cli/command-spec.js";
import { COMMAND_GROUPS } from "../../../src/cli/commands/index.js";
import { type LoopxContext, LoopxCommand } from "../../../src/cli/context.js";
import { flag, optionalValueOption, positional, repeatedOption, rest, valueOption } from "../../../src/cli/declare.js";
import { main } from "../../../src/cli/main.js";
import { UsageError } from "../../../src/core/errors.js";

/** Every kind of declaration, each field reported as the command sees it. */
class EveryKind extends LoopxCommand {
  static override paths = [["every"]];
  static override usage = Command.Usage({ description: "Every kind of field (fixture)" });
  verbose = flag("--verbose", "A flag");
  count = valueOption("-c,--count", "count", "A value");
  tree = optionalValueOption("--tree", "worktree-name", "A flag that may carry a value");
  copy = repeatedOption("--copy", "path", "Given any number of times");
  first = positional("first");
  others = rest("other");
  async execute(): Promise<number> {
    const { verbose, count, tree, copy, first, others } = this;
    this.context.stdout.write(JSON.stringify({ verbose, count, tree, copy, first, others }));
    return 0;
  }
}

/** A rest that needs at least two arguments. */
class TwoAtLeast extends LoopxCommand {
  static override paths = [["pair"]];
  words = rest("word", 2);
  async execute(): Promise<number> {
    this.context.stdout.write(this.words.join("+"));
    return 0;
  }
}

const GROUPS: CommandGroups = {
  ...COMMAND_GROUPS,
  every: async () => ({ name: "every", commands: [EveryKind] }),
  pair: async () => ({ name: "pair", commands: [TwoAtLeast] }),
};

async function fields(argv: string[], groups = GROUPS): Promise<string> {
  let stdout = "";
  const context: LoopxContext = {
    env: {},
    cwd: "/",
    argv,
    stdin: process.stdin,
    stdout: { write: (chunk: string) => ((stdout += chunk), true) } as unknown as LoopxContext["stdout"],
    stderr: process.stderr,
    colorDepth: 1,
  };
  expect(await main(argv, groups, context)).toBe(0);
  return stdout;
}

afterEach(() => vi.restoreAllMocks());

describe("the command line, parsed once", () => {
  it("fills every kind of field from the grammar's reading; clipanion's parser is never called", async () => {
    const process = vi.spyOn(Cli.prototype, "process");
    expect(JSON.parse(await fields(["every", "a"]))).toEqual({ verbose: false, tree: false, first: "a", others: [] });
    expect(JSON.parse(await fields(["every", "--tree", "-c", "-1", "a", "--verbose", "b", "--copy", "x", "--copy=y", "--", "--c"]))).toEqual({
      verbose: true,
      count: "-1",
      tree: true,
      copy: ["x", "y"],
      first: "a",
      others: ["b", "--c"],
    });
    expect(JSON.parse(await fields(["every", "--tree=feature", "--count=3", "a"]))).toMatchObject({ tree: "feature", count: "3" });
    expect(process).not.toHaveBeenCalled();
  });

  it("a rest's least count is the grammar's: one line naming the missing argument", async () => {
    expect(await fields(["pair", "a", "b", "c"])).toBe("a+b+c");
    const error = await main(["pair", "a"], GROUPS).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe("missing argument <word> (usage: loopx pair <word>)");
    const note = await main(["note"]).catch((thrown: unknown) => thrown);
    expect((note as UsageError).message).toBe("missing argument <text> (usage: loopx note <text>)");
  });
});
