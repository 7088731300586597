/**
 * What the journey tests share: loopx as a user gets it (the npm package packed and installed
 * globally into a fresh prefix; the standalone binary copied into a directory of its own), a user's
 * environment (a HOME with a git identity, PATH with the installed loopx, git and the shell tools,
 * and a fake `claude` that speaks stream-json), and git read back. Nothing is set in the
 * environment that a user's shell would not have: the fake agent finds its script through a path
 * written into it, not through a variable.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { BINARY, NODE, ROOT, tempDir } from "../helpers.js";
import type { FakeAgents } from "../fixtures/agents/support.js";

const NPM_CLI = join(dirname(NODE), "..", "lib", "node_modules", "npm", "bin", "npm-cli.js");

function npm(args: string[], cwd: string): string {
  const entry = existsSync(NPM_CLI) ? [NODE, NPM_CLI] : ["npm"];
  return execFileSync(entry[0]!, [...entry.slice(1), ...args, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, npm_config_update_notifier: "false" },
  });
}

/** `npm pack` of this repository's built package, then `npm i -g <tarball> --prefix <fresh dir>`: the prefix. */
export function npmInstalled(): { prefix: string; tarball: string } {
  const packDir = tempDir("loopx-journey-pack-");
  const name = npm(["pack", "--pack-destination", packDir], ROOT).trim().split("\n").pop()!;
  const tarball = join(packDir, name);
  const prefix = tempDir("loopx-journey-prefix-");
  npm(["install", "-g", "--prefix", prefix, tarball], prefix);
  return { prefix, tarball };
}

/** The standalone binary as a user downloads it: `<dir>/loopx`, the directory to put on PATH. */
export function binaryInstalled(): string {
  const dir = tempDir("loopx-journey-bin-");
  copyFileSync(BINARY, join(dir, "loopx"));
  chmodSync(join(dir, "loopx"), 0o755);
  return dir;
}

/** A directory of the tools a shell user has (git, bash, coreutils), and neither node nor bun. */
function toolsDir(): string {
  const dir = tempDir("loopx-journey-tools-");
  const tools = ["bash", "sh", "cat", "cp", "mv", "basename", "dirname", "sleep", "mkdir", "rm", "env", "pwd", "ls", "git", "grep", "sed", "echo", "test", "tr", "date", "head", "tail", "wc", "uname", "id"];
  for (const tool of tools) {
    const found = spawnSync("/bin/sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
    if (found.startsWith("/")) symlinkSync(found, join(dir, tool));
  }
  return dir;
}

/**
 * A fake `claude` on PATH (test/fixtures/agents/fake-agent.sh, told per call by `agents`), in a
 * directory of its own: the directory to put on PATH.
 */
export function fakeClaude(agents: FakeAgents): string {
  const dir = tempDir("loopx-journey-claude-");
  writeFileSync(join(dir, "claude"), `#!/bin/bash\nFAKE_AGENT_DIR=${JSON.stringify(agents.dir)} FAKE_AGENT_NAME=claude exec bash ${JSON.stringify(join(ROOT, "test", "fixtures", "agents", "fake-agent.sh"))} "$@"\n`);
  chmodSync(join(dir, "claude"), 0o755);
  return dir;
}

/** A user's environment: own HOME with a git identity, PATH = `path` directories, then the tools. */
export function userEnv(path: string[]): Record<string, string> {
  const home = tempDir("loopx-journey-home-");
  writeFileSync(join(home, ".gitconfig"), "[user]\n\tname = Journey User\n\temail = user@example.com\n[init]\n\tdefaultBranch = main\n");
  return { HOME: home, PATH: [...path, toolsDir()].join(":"), LANG: "C.UTF-8" };
}

/** `git -C dir ...args` as the user (their HOME), its stdout; throws on failure. */
export function git(dir: string, args: string[], env: Record<string, string>): string {
  const result = spawnSync("git", ["-C", dir, ...args], { env, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

/** A fresh git project with one commit (a README), as a user starts one. */
export function freshProject(env: Record<string, string>, files: Record<string, string> = {}): string {
  const root = tempDir("loopx-journey-project-");
  git(root, ["init", "-q"], env);
  writeFileSync(join(root, "README.md"), "# my project\n");
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  git(root, ["add", "README.md"], env);
  git(root, ["commit", "-q", "-m", "start"], env);
  return root;
}
