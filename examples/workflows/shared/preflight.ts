// A cheap check before the first iteration that the agent CLI can work at all, so that a
// signed-out machine ends the run in one line instead of failing turn after turn:
// - AGENT_PREFLIGHT=<command>: run it (sh -c, in the project); a non-zero exit means the CLI
//   cannot work. `AGENT_PREFLIGHT=off` skips every check.
// - else the CLI's own status command where it has one (claude: `claude auth status`, which
//   exits 1 when not logged in; asked only when no key, token or credentials file is seen), or
//   the preset's look at its credentials (env vars, the files its login writes: gemini, qwen,
//   copilot). codex's `codex login status` is not used: it says
//   "not logged in" for a provider configured with an env_key.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { AgentSpec } from "./agent.ts";
import { streamPreset } from "./presets/index.ts";
import type { Vars } from "./util.ts";

const LOGIN_FIX: Record<string, string> = { claude: "run `claude` once and /login, or set ANTHROPIC_API_KEY" };
/** The CLI's own status command (arguments after its name), where it has one. */
const STATUS_ARGS: Record<string, string[]> = { claude: ["auth", "status"] };

/**
 * Credentials Claude Code would find without being asked (a key or token in the environment, a
 * cloud provider, the files its login writes): then its status command, a slow start of the
 * whole CLI, is not needed. Without them (or on macOS, where the login is in the keychain) it is
 * asked.
 */
function claudeCredentialsSeen(vars: Vars): boolean {
  const names = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"];
  if (names.some((name) => vars[name])) return true;
  const home = vars.HOME || homedir();
  return existsSync(join(vars.CLAUDE_CONFIG_DIR || join(home, ".claude"), ".credentials.json"));
}

const lastLine = (text: string): string => text.trim().split("\n").at(-1)?.trim().slice(0, 200) ?? "";

/** Why the agent cannot work (one line naming the fix), or undefined when it may. */
export function preflight(spec: AgentSpec, vars: Vars, cwd: string): string | undefined {
  const fix = streamPreset(spec.type)?.loginFix ?? LOGIN_FIX[spec.type] ?? `log in with ${spec.cli} first`;
  const own = vars[`${spec.prefix}PREFLIGHT`]?.trim();
  if (own === "off") return undefined;
  if (own) {
    const run = spawnSync("/bin/sh", ["-c", own], { cwd, encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "pipe"] });
    if (run.status === 0) return undefined;
    return `${spec.prefix}PREFLIGHT failed (${own}: ${run.status === null ? "timed out" : `exit ${run.status}`}${lastLine(`${run.stdout}\n${run.stderr}`) ? `: ${lastLine(`${run.stdout}\n${run.stderr}`)}` : ""}): ${fix}`;
  }
  const status = STATUS_ARGS[spec.type];
  if (status && spec.cli === spec.type && !claudeCredentialsSeen(vars)) {
    const run = spawnSync(spec.cli, status, { cwd, encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "pipe"] });
    if (run.status === 1 && /"loggedIn"\s*:\s*false|not logged in/i.test(`${run.stdout}${run.stderr}`)) return `${spec.cli} is not logged in (\`${spec.cli} ${status.join(" ")}\`): ${fix}`;
    return undefined;
  }
  const problem = streamPreset(spec.type)?.preflight?.(vars);
  return problem ? `${problem}: ${fix}` : undefined;
}
