/**
 * shell completion: `loopx completion bash` is sourced in a real bash, which then
 * completes commands, options (from the command classes), targets from .loopx/ and run ids —
 * through bash's own completion machinery (`complete -F`), and at a real prompt (tmux, TAB TAB).
 */
import { spawnSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, NODE, isolatedEnv, makeProject, sh, sleep, tempDir } from "../../helpers.js";
import { loopx, CHANNELS } from "../../fixtures/channels.js";

const node = CHANNELS[0]!;

/** A `loopx` on PATH that runs the built CLI. */
function loopxOnPath(): string {
  const dir = tempDir("loopx-bin-");
  writeFileSync(join(dir, "loopx"), `#!/bin/sh\nexec '${NODE}' '${BIN}' "$@"\n`);
  chmodSync(join(dir, "loopx"), 0o755);
  return dir;
}

/** A project with two workflows and two recorded runs; returns it, its env and the run ids. */
async function project(): Promise<{ cwd: string; env: Record<string, string>; ids: string[] }> {
  const cwd = makeProject({
    ".loopx/ralph/index.sh": sh("$LOOPX_BIN output --stop"),
    ".loopx/ralph/check.sh": sh("$LOOPX_BIN output --stop"),
    ".loopx/tools/lint.sh": sh("$LOOPX_BIN output --stop"),
  });
  const env = isolatedEnv();
  env.PATH = `${loopxOnPath()}:${env.PATH}`;
  for (const target of ["ralph", "tools:lint"]) expect((await loopx(node, ["run", target], cwd, env)).code).toBe(0);
  const ids = (await loopx(node, ["runs", "--json"], cwd, env)).stdout.trim().split("\n").map((line) => (JSON.parse(line) as { id: string }).id);
  return { cwd, env, ids };
}

/** What bash's completion function offers for `line` (the cursor at its end), after sourcing the script. */
function bashComplete(cwd: string, env: Record<string, string>, line: string): string[] {
  const script = `
source <(loopx completion bash)
[[ "$(complete -p loopx)" == "complete -F _loopx loopx" ]] || { echo "not registered: $(complete -p loopx)"; exit 3; }
COMP_LINE=$1
COMP_POINT=\${#COMP_LINE}
# The words as readline splits them (COMP_WORDBREAKS includes ':')
COMP_WORDS=(); while read -r word; do COMP_WORDS+=("$word"); done < <(printf '%s' "$COMP_LINE" | sed -E 's/:/ : /g' | tr -s ' ' '\\n')
[[ "$COMP_LINE" == *" " || "$COMP_LINE" == *: ]] && COMP_WORDS+=("")
COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
_loopx loopx "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\\n' "\${COMPREPLY[@]}"
`;
  const result = spawnSync("bash", ["--norc", "--noprofile", "-c", script, "bash", line], { cwd, env, encoding: "utf8" });
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  return result.stdout.split("\n").filter(Boolean).sort();
}

describe("loopx completion bash, sourced in a real bash", () => {
  it("loopx run <TAB> offers the project's targets; a prefix narrows them; after ':' the script names", async () => {
    const { cwd, env } = await project();
    expect(bashComplete(cwd, env, "loopx run ")).toEqual(["ralph", "ralph:check", "ralph:index", "tools:lint"]);
    expect(bashComplete(cwd, env, "loopx run ra")).toEqual(["ralph", "ralph:check", "ralph:index"]);
    // bash broke the word at ':', so only what follows it is completed
    expect(bashComplete(cwd, env, "loopx run ralph:c")).toEqual(["check"]);
    expect(bashComplete(cwd, env, "loopx run -n 3 tools:")).toEqual(["lint"]);
  });

  it("loopx runs show <TAB> offers the recorded run ids and latest", async () => {
    const { cwd, env, ids } = await project();
    expect(ids).toHaveLength(2);
    expect(bashComplete(cwd, env, "loopx runs show ")).toEqual(["latest", ...ids].sort());
    expect(bashComplete(cwd, env, `loopx runs tail ${ids[0]!.slice(0, 11)}`)).toEqual(ids.filter((id) => id.startsWith(ids[0]!.slice(0, 11))).sort());
  });

  it("loopx runs show|tail <TAB> offer only this project's run ids (their latest is this project's); runs stop any project's", async () => {
    const { cwd, env, ids } = await project();
    const other = makeProject({ ".loopx/w/index.sh": sh("$LOOPX_BIN output --stop") });
    expect((await loopx(node, ["run", "w"], other, env)).code).toBe(0);
    const otherId = JSON.parse((await loopx(node, ["runs", "--json"], other, env)).stdout.trim()) as { id: string };
    expect(bashComplete(cwd, env, "loopx runs show ")).toEqual(["latest", ...ids].sort());
    expect(bashComplete(cwd, env, "loopx runs tail ")).toEqual(["latest", ...ids].sort());
    expect(bashComplete(other, env, "loopx runs show --json ")).toEqual(["latest", otherId.id].sort());
    expect(bashComplete(cwd, env, "loopx runs stop ")).toEqual(["latest", ...ids, otherId.id].sort());
  });

  it("commands, subcommands and each command's options come from the command classes", async () => {
    const { cwd, env } = await project();
    expect(bashComplete(cwd, env, "loopx ")).toEqual(["completion", "env", "init", "install", "note", "otel", "output", "progress", "receipt", "run", "runs", "sandbox", "version"]);
    expect(bashComplete(cwd, env, "loopx sandbox ")).toEqual(["show"]);
    expect(bashComplete(cwd, env, "loopx runs ")).toEqual(["clean", "continue", "pause", "resume", "serve", "show", "stop", "tail"]);
    expect(bashComplete(cwd, env, "loopx env ")).toEqual(["list", "remove", "set"]);
    expect(bashComplete(cwd, env, "loopx otel ")).toEqual(["test"]);
    expect(bashComplete(cwd, env, "loopx nope ")).toEqual([]);
    expect(bashComplete(cwd, env, "loopx run --")).toEqual(["--count-estimates", "--help", "--log", "--max-cost", "--max-time", "--max-tokens", "--on-end", "--sandbox", "--sandbox-allow", "--stall-after", "--summary", "--timeout", "--worktree", "--worktree-copy", "--worktree-merge"]);
    expect(bashComplete(cwd, env, "loopx runs --state f")).toEqual(["failed"]);
    expect(bashComplete(cwd, env, "loopx completion ")).toEqual(["bash", "fish", "zsh"]);
    // -e takes a file: bash's own file-name completion
    writeFileSync(join(cwd, "vars.env"), "A=1\n");
    expect(bashComplete(cwd, env, "loopx run -e va")).toEqual(["vars.env"]);
  });

  it("at a real bash prompt (tmux): loopx run <TAB><TAB> lists the targets", async () => {
    const { cwd, env } = await project();
    const socket = join(tempDir("loopx-tmux-"), "sock");
    const rc = join(tempDir(), "bashrc");
    writeFileSync(rc, `PS1='$ '\nsource <(loopx completion bash)\n`);
    const tmux = (...args: string[]) => spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...args], { encoding: "utf8", env: { ...env, TERM: "xterm-256color" } });
    expect(tmux("new-session", "-d", "-x", "120", "-y", "30", "-c", cwd, "bash", "--noprofile", "--rcfile", rc, "-i").status).toBe(0);
    try {
      let screen = "";
      const showsPrompt = async (pattern: RegExp) => {
        for (let i = 0; i < 200; i++) {
          screen = tmux("capture-pane", "-p").stdout;
          if (pattern.test(screen)) return true;
          await sleep(50);
        }
        return false;
      };
      expect(await showsPrompt(/^\$\s*$/m)).toBe(true); // capture-pane drops trailing blanks
      // The first TAB finds no common prefix to insert; the second lists (each asks loopx anew).
      tmux("send-keys", "loopx run ", "Tab");
      await sleep(1500);
      tmux("send-keys", "Tab");
      expect(await showsPrompt(/tools:lint/), screen).toBe(true);
      expect(screen).toMatch(/ralph:check/);
      expect(screen).toMatch(/ralph:index/);
      tmux("send-keys", "to", "Tab");
      expect(await showsPrompt(/\$ loopx run tools:lint\s*$/m), screen).toBe(true);
    } finally {
      tmux("kill-server");
    }
  });
});

describe("loopx completion", () => {
  it("prints a script for zsh and fish too, and refuses another shell in one line", async () => {
    const cwd = tempDir();
    const env = isolatedEnv();
    const zsh = await loopx(node, ["completion", "zsh"], cwd, env);
    expect(zsh).toMatchObject({ code: 0, stderr: "" });
    expect(zsh.stdout).toContain("compdef _loopx loopx");
    const fish = await loopx(node, ["completion", "fish"], cwd, env);
    expect(fish.stdout).toContain("complete -c loopx");
    const bad = await loopx(node, ["completion", "tcsh"], cwd, env);
    expect(bad).toMatchObject({ code: 1, stdout: "", stderr: 'loopx: unknown shell "tcsh" for \'loopx completion\' (shells: bash, zsh, fish)\n' });
    const help = await loopx(node, ["completion", "-h"], cwd, env);
    expect(help.stdout).toContain(`eval "$(loopx completion bash)"`);
  });
});
