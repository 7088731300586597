/**
 * The sandbox's policy as src/sandbox/policy.ts reads and adds it up: the three layers (workflow,
 * project, command line), what a bad file says in one line, the effective policy's paths, its
 * digest, and the entries that would leave the fence open.
 */
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LoopxError } from "../../../src/core/errors.js";
import { effectivePolicy, policyDigest, policySources, SANDBOX_EXIT_CODE, unsafeEntry } from "../../../src/sandbox/policy.js";
import { makeProject } from "../../helpers.js";

/** A project root with the given `.loopx/…` files (a string is written as is, anything else as JSON). */
function project(files: Record<string, unknown> = {}): string {
  return makeProject(Object.fromEntries(Object.entries(files).map(([path, content]) => [path, typeof content === "string" ? content : JSON.stringify(content)])));
}

/** The one-line error that reading `root`'s policy gives (workflow "w"), or undefined. */
function problem(root: string): { message: string; exitCode: number } | undefined {
  try {
    policySources(root, "w", []);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(LoopxError);
    const { message, exitCode } = error as LoopxError & { exitCode: number };
    expect(message).not.toContain("\n");
    return { message, exitCode };
  }
}

describe("policySources", () => {
  it("the workflow's layer, the project's, then the command line's; none without files or rules", () => {
    expect(policySources(project(), "w", [])).toEqual([]);
    const root = project({ ".loopx/w/sandbox.json": { write: ["out"] }, ".loopx/sandbox.json": { network: ["api.example.com:443"], $comment: "ok" } });
    const sources = policySources(root, "w", ["127.0.0.1:8080", "~/cache"]);
    expect(sources.map((source) => source.name)).toEqual(["workflow", "project", "command line"]);
    expect(sources[0]).toEqual({ name: "workflow", file: join(root, ".loopx/w/sandbox.json"), layer: { write: ["out"] } });
    expect(sources[2]!.layer).toEqual({ write: ["~/cache"], read: [], network: ["127.0.0.1:8080"] });
    // Another workflow's file is not this run's layer.
    expect(policySources(root, "other", []).map((source) => source.name)).toEqual(["project"]);
  });

  it.each([
    ["not JSON", "{", /^sandbox policy .*sandbox\.json is not valid JSON \(/],
    ["a list", "[]", /must be a JSON object with "write", "read" and "network" lists$/],
    ["an unknown field", { write: [], writes: [] }, /has unknown field "writes" \(known: write, read, network\)$/],
    ["a list of numbers", { read: [1] }, /: "read" must be a list of non-empty strings$/],
    ["an empty path", { write: [""] }, /: "write" must be a list of non-empty strings$/],
    ["a host without a port", { network: ["example.com"] }, /: network "example.com" is not host:port/],
    ["port 0", { network: ["example.com:0"] }, /: network "example.com:0" has no valid port \(1 to 65535\)$/],
    ["port 65536", { network: ["example.com:65536"] }, /has no valid port/],
  ])("%s: one line naming the file, exit code 4", (_, content, message) => {
    const found = problem(project({ ".loopx/w/sandbox.json": content }));
    expect(found?.message).toMatch(message);
    expect(found?.exitCode).toBe(SANDBOX_EXIT_CODE);
  });

  it("any host:port with a port of 1-65535 is accepted; every other port is refused", () => {
    const host = fc.stringMatching(/^[A-Za-z0-9.-]{1,20}$/);
    fc.assert(
      fc.property(host, fc.integer({ min: 0, max: 99_999 }), (name, port) => {
        const found = problem(project({ ".loopx/sandbox.json": { network: [`${name}:${port}`] } }));
        return port >= 1 && port <= 65_535 ? found === undefined : /has no valid port/.test(found?.message ?? "");
      }),
      { numRuns: 60 },
    );
  });
});

describe("effectivePolicy", () => {
  it("adds the layers up: ~ is $HOME, relative paths the project's, sorted and unique", () => {
    const root = project({ ".loopx/w/sandbox.json": { write: ["out", "~/cache"], read: ["~"] }, ".loopx/sandbox.json": { write: ["./out", "/abs/dir/"], network: ["b.example:443", "a.example:443"] } });
    const policy = effectivePolicy(policySources(root, "w", ["b.example:443"]), root, { HOME: "/home/me" });
    expect(policy).toEqual({ write: ["/abs/dir", "/home/me/cache", join(root, "out")].sort(), read: ["/home/me"], network: ["a.example:443", "b.example:443"] });
  });

  it("the digest is 16 hex digits and changes with the policy or the root", () => {
    const policy = { write: ["/a"], read: [], network: [] };
    const digest = policyDigest(policy, "/p");
    expect(digest).toMatch(/^[0-9a-f]{16}$/);
    expect(policyDigest({ ...policy }, "/p")).toBe(digest);
    expect(policyDigest({ ...policy, network: ["h:1"] }, "/p")).not.toBe(digest);
    expect(policyDigest(policy, "/q")).not.toBe(digest);
  });
});

describe("unsafeEntry", () => {
  const env = { HOME: "/home/me" };
  const none = { write: [], read: [], network: [] };
  it("a policy that opens $HOME or / as a whole, or a project root above $HOME, is named", () => {
    expect(unsafeEntry({ ...none, write: ["/home/me"] }, "/work/p", env)).toMatch(/^the policy makes \/home\/me writable, which holds your home directory \/home\/me/);
    expect(unsafeEntry({ ...none, read: ["/"] }, "/work/p", env)).toMatch(/^the policy makes \/ readable/);
    expect(unsafeEntry(none, "/home", env)).toMatch(/^the project root \/home holds your home directory/);
  });

  it("directories inside $HOME, and a look-alike prefix, are fine", () => {
    expect(unsafeEntry({ ...none, write: ["/home/me/cache", "/home/me2"], read: ["/home/me/.gitconfig"] }, "/home/me/p", env)).toBeUndefined();
  });
});
