/** `--worktree[=<name>]`, `--worktree-copy` and `--worktree-merge` as the engine checks them (src/worktree/option.ts). */
import { describe, expect, it } from "vitest";
import { LoopxError } from "../../../src/core/errors.js";
import { validateWorktreeMerge, validateWorktreeOption } from "../../../src/worktree/option.js";

describe("validateWorktreeOption", () => {
  it("none asked for (undefined or false): the project's own tree, whatever the copies", () => {
    expect(validateWorktreeOption(undefined, undefined)).toBeUndefined();
    expect(validateWorktreeOption(false, ["specs"])).toBeUndefined();
  });

  it("true or a name, the copies and the merge kept", () => {
    expect(validateWorktreeOption(true, undefined)).toEqual({ copy: [] });
    expect(validateWorktreeOption("fix-1.2_b", ["specs", ".env"], true)).toEqual({ name: "fix-1.2_b", copy: ["specs", ".env"], merge: true });
  });

  it.each<[string, unknown, unknown, RegExp]>([
    ["a number", 1, undefined, /^worktree must be true or a name, got 1$/],
    ["a name git refuses", "a..b", undefined, /^invalid worktree name "a\.\.b": use letters, digits/],
    ["a name ending .lock", "x.lock", undefined, /^invalid worktree name "x\.lock"/],
    ["a name starting with a dash", "-x", undefined, /^invalid worktree name "-x"/],
    ["copies that are not a list", true, "specs", /^worktreeCopy must be an array of paths, got "specs"$/],
    ["a copy that is no path", true, ["ok", ""], /^worktreeCopy must be an array of paths, got an array holding a non-path$/],
    ["a copy with NUL", true, ["a\0b"], /^worktreeCopy must be an array of paths/],
  ])("refuses %s in one line", (_label, worktree, copy, message) => {
    expect(() => validateWorktreeOption(worktree, copy)).toThrow(LoopxError);
    expect(() => validateWorktreeOption(worktree, copy)).toThrow(message);
  });
});

describe("validateWorktreeMerge", () => {
  it("true, or nothing asked for; anything but a boolean is refused", () => {
    expect(validateWorktreeMerge(true)).toBe(true);
    expect(validateWorktreeMerge(false)).toBeUndefined();
    expect(validateWorktreeMerge(undefined)).toBeUndefined();
    expect(() => validateWorktreeMerge("yes")).toThrow(/^worktreeMerge must be a boolean, got "yes"$/);
  });
});
