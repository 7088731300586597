/**
 * The CLI at its seams, black-box on the built CLI under node (one code path for every channel):
 * - `runs show|tail|stop|pause|continue|resume|serve|clean -h` each print their own help (usage,
 *   their options described, examples), not `runs -h`'s; `loopx help [<command>...]` prints what
 *   `<command> -h` prints;
 * - `--since` takes days and weeks, and its totals line is in local time, as the table;
 * - an env file's `export X=1` line: skipped as the spec says, with a warning that says why;
 * - `run -h` lists the workflows' files in one column.
 */
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { RUNTIMES, expectOneLineError, isolatedEnv, makeProject, runLoopx, sh, tempDir } from "../../helpers.js";

const node = RUNTIMES[0]!;
const loopx = (args: string[], cwd = tempDir(), env = isolatedEnv()) => runLoopx(node, args, { cwd, env });

/** Each subcommand, the options its help describes, and a word of its examples. */
const SUBCOMMANDS: Array<[string, string[]]> = [
  ["show", ["--json", "--last <count>", "--markdown", "--outcome"]],
  ["tail", ["--json"]],
  ["stop", ["--now"]],
  ["pause", []],
  ["continue", []],
  ["resume", ["-n <count>", "--max-cost <usd>", "--count-estimates", "--max-tokens <count>"]],
  ["serve", ["--port <port>", "--host <address>", "--open"]],
  ["clean", ["--force", "--dry-run", "--all"]],
];

describe("each subcommand's own help (node)", () => {
  it.concurrent.each(SUBCOMMANDS)("runs %s -h: its usage, its options described, examples; loopx help runs <it> the same", async (sub, options) => {
    const group = await loopx(["runs", "-h"]);
    const own = await loopx(["runs", sub, "-h"]);
    expect(own.code).toBe(0);
    expect(own.stderr).toBe("");
    expect(own.stdout).not.toBe(group.stdout);
    expect(own.stdout).toMatch(new RegExp(`^Usage: loopx runs ${sub}\\b.*\\n`));
    const table = own.stdout.slice(own.stdout.indexOf("\nOptions:\n"), own.stdout.indexOf("\nExamples:\n"));
    for (const option of [...options, "-h, --help"]) expect(table).toMatch(new RegExp(`^ {2}${option.replace(/[$()*+.?[\\\]^{|}]/g, "\\$&")}\\s+\\S`, "m"));
    expect(own.stdout).toMatch(new RegExp(`\\nExamples:\\n(?: {2}# .*\\n {2}loopx runs ${sub}\\b.*\\n)+`));
    expect((await loopx(["help", "runs", sub])).stdout).toBe(own.stdout);
    // The listings keep each subcommand's whole command line.
    expect(group.stdout).toMatch(new RegExp(`^ {2}loopx runs ${sub}\\b(?! \\[options\\])`, "m"));
  });

  it("loopx help [<command>...] prints what -h prints; help of no command is one usage error", async () => {
    expect((await loopx(["help"])).stdout).toBe((await loopx(["-h"])).stdout);
    expect((await loopx(["help"])).stdout).toMatch(/'loopx help <command>'/);
    const cwd = makeProject({ ".loopx/w/index.sh": sh("true") });
    for (const command of [["run"], ["runs"], ["env", "set"], ["install"], ["otel", "test"]]) {
      const asked = await loopx(["help", ...command], cwd);
      expect(asked.code).toBe(0);
      expect(asked.stdout, command.join(" ")).toBe((await loopx([...command, "-h"], cwd)).stdout);
    }
    expectOneLineError(await loopx(["help", "nope"]), 'no command "nope" to show help for');
    expectOneLineError(await loopx(["help", "runs", "nope"]), 'no command "loopx runs nope" to show help for');
  });
});

describe("--since (node)", () => {
  it("takes days and weeks; the totals line's time is local, as the table's start column", async () => {
    const cwd = makeProject({ ".loopx/b/index.sh": sh('"$LOOPX_BIN" receipt --cost 0.1 --kind billed') });
    // Far from UTC: a UTC time would show.
    const env = isolatedEnv({ TZ: "Pacific/Kiritimati" });
    expect((await loopx(["run", "-n", "1", "b"], cwd, env)).code).toBe(0);
    for (const since of ["1d", "7d", "2w", "1w2d3h"]) {
      const before = Date.now();
      const listed = await loopx(["runs", "--since", since], cwd, env);
      expect(listed.code, listed.stderr).toBe(0);
      const total = /^total since (\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d): \$0\.10$/m.exec(listed.stdout);
      expect(total, listed.stdout).not.toBeNull();
      const days = { "1d": 1, "7d": 7, "2w": 14, "1w2d3h": 9.125 }[since]!;
      // Kiritimati is UTC+14: its wall clock read as UTC is 14 hours ahead of the instant.
      const [, y, mo, d, h, mi, s] = total!.map(Number);
      const shown = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!) - 14 * 3_600_000;
      expect(Math.abs(shown - (before - days * 86_400_000))).toBeLessThan(60_000);
      // The table's start column is in the same time.
      expect(listed.stdout).toMatch(new RegExp(`^\\S+ +\\S+ +${new Date(Date.now() + 14 * 3_600_000).toISOString().slice(0, 10)} `, "m"));
    }
    expectOneLineError(await loopx(["runs", "--since", "1h1d"], cwd, env), '--since: "1h1d" is not a duration: units go largest first');
  });
});

describe("env files (node)", () => {
  it("an 'export X=1' line is skipped as the spec says, with a warning that says why and what to write", async () => {
    const cwd = makeProject({ ".loopx/w/index.sh": sh('printf "%s|%s" "${X-unset}" "$Y" > "$LOOPX_PROJECT_ROOT/seen"') });
    writeFileSync(join(cwd, "vars.env"), "export X=1\nY=2\n");
    const result = await loopx(["run", "-n", "1", "-e", "vars.env", "w"], cwd);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`loopx: warning: ${join(cwd, "vars.env")}:1: ignoring line: 'export ' is shell syntax, not part of loopx's .env format (spec §8.1): write X=... without it\n`);
    expect((await import("node:fs")).readFileSync(join(cwd, "seen"), "utf8")).toBe("unset|2");
  });
});

describe("run -h (node)", () => {
  it("lists each workflow's scripts with their files in one column", async () => {
    const cwd = makeProject({
      ".loopx/a/index.sh": sh("true"),
      ".loopx/a/a-much-longer-script-name.sh": sh("true"),
      ".loopx/ralph/check.ts": "export {};\n",
      ".loopx/ralph/x.sh": sh("true"),
    });
    const help = await loopx(["run", "-h"], cwd);
    const rows = help.stdout.slice(help.stdout.indexOf("Workflows in .loopx/:\n")).split("\n").filter((line) => line.startsWith("    "));
    expect(rows).toHaveLength(4);
    const columns = rows.map((row) => row.search(/\S+\.(?:sh|ts)$/));
    expect(new Set(columns).size, rows.join("\n")).toBe(1);
  });
});
