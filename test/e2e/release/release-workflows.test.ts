/**
 * The GitHub Actions workflows (.github/workflows/ci.yml and release.yml) are checked here, not on
 * the first tag: each validates against GitHub's workflow schema with action-validator (a wasm
 * build, offline), a deliberately broken copy of each is rejected, and what the release promises
 * (tag trigger, the four binaries each tested on its own runner, provenance, one secret) is read
 * from the parsed files.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { NODE, ROOT, tempDir } from "../../helpers.js";

const VALIDATOR = join(ROOT, "node_modules", "@action-validator", "cli", "cli.mjs");
const WORKFLOWS = join(ROOT, ".github", "workflows");
const read = (name: string) => readFileSync(join(WORKFLOWS, name), "utf8");

/** Runs action-validator on `text` saved as <name> (a workflow file, since it is not action.yml). */
function validate(text: string, name = "workflow.yml") {
  const path = join(tempDir("loopx-workflow-"), name);
  writeFileSync(path, text);
  const result = spawnSync(NODE, [VALIDATOR, path], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", FORCE_COLOR: "0" } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Replaces exactly one occurrence of `from` (so a broken copy is broken the way the test says). */
function breakOnce(text: string, from: string | RegExp, to: string): string {
  const matches = text.match(typeof from === "string" ? new RegExp(from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "g") : new RegExp(from.source, `${from.flags}g`));
  expect(matches, `expected one ${String(from)} to break`).toHaveLength(1);
  return text.replace(from, to);
}

describe("workflow files validate against GitHub's workflow schema (action-validator)", () => {
  for (const name of ["ci.yml", "release.yml", "docs.yml"]) {
    it(`${name} is valid`, () => {
      const result = validate(read(name), name);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
    });
  }

  it("a ci.yml with a misspelt job key is rejected", () => {
    const result = validate(breakOnce(read("ci.yml"), "    runs-on:", "    runs_on:"), "ci.yml");
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr).errors[0]).toMatchObject({ path: "/jobs/test" });
  });

  it("a release.yml whose publish job needs a job that does not exist is rejected", () => {
    const result = validate(breakOnce(read("release.yml"), "needs: [build, test, binary]", "needs: [build, tests, binary]"), "release.yml");
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr).errors).toContainEqual(expect.objectContaining({ code: "unresolved_job", detail: "unresolved job tests" }));
  });

  it("a release.yml with an unknown trigger and one that is not YAML are rejected", () => {
    const badTrigger = validate(breakOnce(read("release.yml"), /^ {2}push:$/m, "  pushed:"), "release.yml");
    expect(badTrigger.code).toBe(1);
    expect(JSON.parse(badTrigger.stderr).errors[0]).toMatchObject({ path: "/on" });
    const notYaml = validate(`${read("release.yml")}\n  - [unclosed\n`, "release.yml");
    expect(notYaml.code).toBe(1);
    expect(JSON.parse(notYaml.stderr).errors[0]).toMatchObject({ code: "parse_error" });
  });
});

describe("what the workflows promise", () => {
  const ci = parse(read("ci.yml"));
  const release = parse(read("release.yml"));
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const steps = (job: { steps: { run?: string; uses?: string }[] }) => job.steps.map((s) => s.run ?? s.uses ?? "").join("\n");

  it("ci.yml runs .ci/run on push and pull request, on Linux x64 and macOS arm64, under Node 20, 22, 24 and 26", () => {
    expect(Object.keys(ci.on).sort()).toEqual(["pull_request", "push"]);
    expect(ci.jobs.test.strategy.matrix).toEqual({ os: ["ubuntu-latest", "macos-14"], node: [20, 22, 24, 26] });
    expect(steps(ci.jobs.test)).toMatch(/^sudo env "PATH=\$PATH" CI=true bash \.ci\/run < \/dev\/null$/m);
    expect(existsSync(join(ROOT, ".ci", "run"))).toBe(true);
  });

  it("release.yml runs on v* tags, checks the tag, builds with the package's own scripts and checks the result", () => {
    expect(release.on).toEqual({ push: { tags: ["v*"] } });
    const build = steps(release.jobs.build);
    expect(build).toContain('node scripts/check-tag.mjs "$GITHUB_REF_NAME"');
    for (const script of ["build", "build:binaries", "release:check"]) {
      expect(build).toContain(`npm run ${script}`);
      expect(pkg.scripts[script]).toBeTypeOf("string");
    }
    expect(existsSync(join(ROOT, "scripts", "check-tag.mjs"))).toBe(true);
  });

  it("each binary runs the standalone e2e tests on its own OS and architecture before anything is published", () => {
    expect(release.jobs.binary.strategy.matrix.include).toEqual([
      { target: "linux-x64", runner: "ubuntu-24.04" },
      { target: "linux-arm64", runner: "ubuntu-24.04-arm" },
      { target: "darwin-arm64", runner: "macos-14" },
      { target: "darwin-x64", runner: "macos-15-intel" },
    ]);
    expect(steps(release.jobs.binary)).toContain("npx vitest run test/e2e/binary/standalone.test.ts");
    expect(existsSync(join(ROOT, "test", "e2e", "binary", "standalone.test.ts"))).toBe(true);
    expect(release.jobs.publish.needs).toEqual(["build", "test", "binary"]);
  });

  it("publish: npm with provenance (id-token: write), a GitHub release with the assets, and NPM_TOKEN as the only secret", () => {
    expect(release.permissions).toEqual({ contents: "read" });
    expect(release.jobs.publish.permissions).toEqual({ contents: "write", "id-token": "write" });
    const publish = steps(release.jobs.publish);
    expect(publish).toMatch(/npm publish out\/\*\.tgz --provenance/);
    expect(publish).toMatch(/gh release create "\$GITHUB_REF_NAME"[\s\S]*assets\/\*/);
    expect(read("release.yml")).toContain("name: workflows-archive");
    const secrets = new Set([...`${read("ci.yml")}\n${read("release.yml")}`.matchAll(/secrets\.([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
    expect([...secrets]).toEqual(["NPM_TOKEN"]);
  });
});
