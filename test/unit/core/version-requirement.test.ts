import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseVersionRequirement, satisfiesVersion } from "../../../src/core/version-requirement.js";
import { readVersionRequirement } from "../../../src/runtime/workflow-package.js";
import { tempDir } from "../../helpers.js";

describe("workflow version requirement (spec §3.2)", () => {
  it.each([
    [{}, { kind: "none" }],
    [{ name: "x" }, { kind: "none" }],
    [{ dependencies: { other: "1" } }, { kind: "none" }],
    [{ dependencies: { loopx: "^1.2.0" } }, { kind: "range", range: "^1.2.0", field: "dependencies" }],
    [{ devDependencies: { loopx: ">=0.1 <2" } }, { kind: "range", range: ">=0.1 <2", field: "devDependencies" }],
    [{ dependencies: { loopx: "^1.0.0" }, devDependencies: { loopx: "^2.0.0" } }, { kind: "range", range: "^1.0.0", field: "dependencies" }],
    [{ optionalDependencies: { loopx: "^9.0.0" } }, { kind: "none" }],
    [{ optionalDependencies: { loopx: "^9.0.0" }, devDependencies: { loopx: "*" } }, { kind: "range", range: "*", field: "devDependencies" }],
    [{ dependencies: "loopx" }, { kind: "none" }],
    [[1, 2], { kind: "none" }],
    [null, { kind: "none" }],
  ])("%j → %j", async (json, expected) => {
    expect(await parseVersionRequirement(JSON.stringify(json))).toEqual(expected);
  });

  it.each([
    ["{ nope", /^package\.json is invalid JSON \(.*\); loopx version check skipped$/],
    ["", /invalid JSON/],
    [JSON.stringify({ dependencies: { loopx: "not a range" } }), /^package\.json declares loopx version "not a range" in dependencies, which is not a valid semver range; loopx version check skipped$/],
    [JSON.stringify({ devDependencies: { loopx: "latest" } }), /"latest" in devDependencies, which is not a valid semver range/],
    [JSON.stringify({ dependencies: { loopx: 2 } }), /loopx version 2 in dependencies, which is not a valid semver range/],
    // dependencies wins even when it is the broken one
    [JSON.stringify({ dependencies: { loopx: "github:x/y" }, devDependencies: { loopx: "^1.0.0" } }), /"github:x\/y" in dependencies, which is not a valid semver range/],
  ])("warns for %j", async (text, message) => {
    const result = await parseVersionRequirement(text);
    expect(result.kind).toBe("warning");
    if (result.kind === "warning") {
      expect(result.message).toMatch(message);
      expect(result.message).not.toContain("\n");
    }
  });

  it("reads package.json from a workflow directory: absent, unreadable, valid", async () => {
    const dir = tempDir();
    expect(await readVersionRequirement(dir)).toEqual({ kind: "none" });
    mkdirSync(join(dir, "package.json")); // exists but cannot be read as a file
    expect(await readVersionRequirement(dir)).toMatchObject({ kind: "warning", message: expect.stringMatching(/^cannot read package\.json: is a directory \(EISDIR\); loopx version check skipped$/) });
    const other = tempDir();
    writeFileSync(join(other, "package.json"), "\ufeff" + JSON.stringify({ devDependencies: { loopx: "^0.1.0" } }));
    expect(await readVersionRequirement(other)).toEqual({ kind: "range", range: "^0.1.0", field: "devDependencies" });
  });

  it.each([
    ["^1.2.0", "1.4.0", true],
    ["^1.2.0", "2.0.0", false],
    [">=1.0.0", "2.0.0-beta.1", true],
    ["^2.0.0", "2.1.0-rc.1", true],
    ["*", "0.0.1-alpha", true],
    ["", "3.0.0", true],
    ["<1.0.0", "1.0.0", false],
    ["bogus", "1.0.0", false],
  ])("satisfiesVersion(%j, %j) = %s", async (range, version, expected) => {
    expect(await satisfiesVersion(range, version)).toBe(expected);
  });
});
