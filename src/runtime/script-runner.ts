import { closeSync, existsSync, openSync, readSync } from "node:fs";
import type { DiscoveredScript } from "../core/discovery.js";
import { ScriptFailedError } from "../core/errors.js";
import type { ScriptInput, StdoutText } from "../core/stdout-text.js";
import { shownText } from "../core/untrusted-text.js";
import { jsLauncher } from "./platform/index.js";
import type { ScriptSupervisor } from "./supervisor.js";
import { STDOUT_HELD_MS } from "./spawn.js";
import type { FoundProcess } from "../os/procfs.js";
import type { Env } from "../core/env.js";


/**
 * The command line and environment for one script execution (spec §6.3): bash for `.sh`, the
 * platform's launcher for JS/TS (Node with loopx's module hooks, Bun, or the binary acting as Bun).
 */
function scriptInvocation(script: DiscoveredScript, env: Env): { command: string; args: string[]; env: Env } {
  if (script.ext === ".sh") return { command: "/bin/bash", args: [script.path], env };
  const launcher = jsLauncher();
  // The engine hands over a fresh env object per execution (LOOPX_ITERATION changes every time),
  // so there is nothing to cache here.
  return { command: launcher.command, args: launcher.args(script.path), env: { ...env, ...launcher.extraEnv(env) } };
}

/**
 * Runs one script through the supervisor and returns its stdout. A non-zero exit, a death by
 * signal or a failure to start is a ScriptFailedError (spec §7.2); the stdout of a failed script is
 * never parsed.
 */
export async function runScript(
  supervisor: ScriptSupervisor,
  script: DiscoveredScript,
  label: string,
  cwd: string,
  env: Env,
  stdin: ScriptInput | undefined,
  onStdoutHeld?: (message: string) => void,
): Promise<{ stdout: StdoutText; stdoutBytes: number }> {
  // Discovery is cached for the whole loop; a file removed since then fails here, clearly.
  if (!existsSync(script.path)) throw new ScriptFailedError(`script ${label} cannot be started: ${script.path} no longer exists`);
  const invocation = scriptInvocation(script, env);
  const held = onStdoutHeld && ((holders: FoundProcess[]) => onStdoutHeld(heldMessage(label, holders)));
  const exit = await supervisor.run({ ...invocation, cwd, stdin, ...(held ? { onStdoutHeld: held } : {}) });
  if (exit.spawnError) throw new ScriptFailedError(`script ${label} cannot be started: ${exit.spawnError.message}`);
  const ended = { exitCode: exit.code, signal: exit.signal, stdoutBytes: exit.stdoutOverCap?.bytes ?? exit.stdout.bytes, ...(exit.stderrTail ? { stderr: exit.stderrTail } : {}) };
  if (exit.signal) throw new ScriptFailedError(`script ${label} was killed by ${exit.signal}`, ended, crlfHint(script));
  if (exit.code !== 0) throw new ScriptFailedError(`script ${label} exited with code ${exit.code}`, ended, crlfHint(script));
  if (exit.stdoutOverCap) {
    const { bytes, cap } = exit.stdoutOverCap;
    throw new ScriptFailedError(`script ${label} wrote ${bytes} bytes to stdout, more than loopx's cap of ${cap} bytes (LOOPX_MAX_STDOUT; large output belongs in a file)`, ended);
  }
  return { stdout: exit.stdout, stdoutBytes: exit.stdout.bytes };
}

/**
 * For a failed bash script saved with Windows line endings (bash reads the `\r` as part of each
 * word: `unknown option "--stop\r"`, a file named `2\r` from `>&2`): one line naming the file and
 * the fix. Only read when a script failed; its first 64 KiB say enough.
 */
function crlfHint(script: DiscoveredScript): string | undefined {
  if (script.ext !== ".sh") return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(script.path, "r");
    const head = Buffer.alloc(64 * 1024);
    const read = readSync(fd, head, 0, head.length, 0);
    if (!head.subarray(0, read).includes("\r\n")) return undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const path = shownText(script.path);
  return `${path} has Windows (CRLF) line endings, which bash reads as part of each command; convert it: sed -i 's/\\r$//' ${path}`;
}

/** "main:index: its own process exited, but ... held by pid 123 (sleep 20) ...": one line. */
function heldMessage(label: string, holders: FoundProcess[]): string {
  const shown = holders.map(({ pid, command }) => `pid ${pid} (${shownText(command.length > 60 ? `${command.slice(0, 60)}…` : command)})`);
  const by = shown.length > 0 ? `held by ${shown.join(", ")}` : "held by a process loopx cannot see";
  return (
    `${label}: its own process has exited, but its stdout is still open after ${STDOUT_HELD_MS / 1000} s, ${by}; ` +
    `loopx reads a script's stdout to its end, so it waits for them — start background commands with their output elsewhere: cmd >/dev/null 2>&1 &`
  );
}
