import { spawn } from "node:child_process";
import type { PartEvent, RunHookEvent } from "../core/events.js";
import { signalGroup } from "../os/process-group.js";
import { endVariables, type EndOutcome } from "./outcome.js";
import { shownText } from "../core/untrusted-text.js";
import { hookFailure } from "../records/hook-report.js";

/**
 * Runs an end-of-run hook once: `/bin/sh -c <command>` in the project root, in a process group of
 * its own (a Ctrl-C in the terminal is not its), the outcome as JSON on stdin, stdout and stderr
 * kept (and echoed where asked), ended at its time limit — SIGTERM to its group, SIGKILL 2 s later.
 * Never throws: what went wrong is in the result.
 */

/** What the record keeps of the hook's output. */
const KEPT_OUTPUT_BYTES = 4096;
/** What is kept of the end of its stderr, for the last line its failure warning quotes. */
const STDERR_TAIL_BYTES = 1024;
/** The quoted line, at most. */
const QUOTED_LINE_CHARS = 300;
/** After SIGTERM at the limit, how long the hook's group has before SIGKILL. */
const HOOK_KILL_GRACE_MS = 2_000;
/** Once the hook has exited, how long its output pipes may stay open (a child it left behind holds them). */
const PIPE_DRAIN_MS = 200;

export interface HookRequest {
  command: string;
  cwd: string;
  /** The run's environment for the hook (hookBaseEnv); LOOPX_END_* are added here. */
  env: Record<string, string>;
  outcome: EndOutcome;
  timeoutMs: number;
  /** Each piece of output as it comes (loopx's terminal). */
  echo?: (chunk: Buffer) => void;
}

export type HookResult = Omit<RunHookEvent, "v" | "time" | "run" | "type" | "hook" | "by"> & {
  /** The last line the hook wrote to stderr (for its failure warning; the record has `output`). */
  lastStderrLine?: string;
};

export function runHook(request: HookRequest): Promise<HookResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const output = keptOutput(request.echo);
    let timedOut = false;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const finish = (exitCode: number | null, signal: string | null, error?: string) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      resolve({ exitCode, signal, timedOut, durationMs: Date.now() - started, ...output.result(), ...(error !== undefined ? { error } : {}) });
    };
    let child;
    try {
      child = spawn("/bin/sh", ["-c", request.command], {
        cwd: request.cwd,
        env: { ...request.env, ...endVariables(request.outcome) },
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
    } catch (error) {
      finish(null, null, `cannot start: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    child.stdout.on("data", (chunk: Buffer) => output.take(chunk, false));
    child.stderr.on("data", (chunk: Buffer) => output.take(chunk, true));
    child.stdin.on("error", () => undefined); // a hook that does not read its stdin
    child.stdin.end(`${JSON.stringify(request.outcome)}\n`);
    child.on("error", (error) => finish(null, null, `cannot start: ${error.message}`));
    const pid = child.pid;
    timers.push(
      setTimeout(() => {
        timedOut = true;
        if (pid !== undefined) signalGroup(pid, "SIGTERM");
        timers.push(setTimeout(() => pid !== undefined && signalGroup(pid, "SIGKILL"), HOOK_KILL_GRACE_MS));
      }, request.timeoutMs),
    );
    let exit: [number | null, string | null] | undefined;
    child.on("exit", (code, signal) => {
      exit = [code, signal];
      // Output a child of the hook still holds open is not waited for long.
      timers.push(setTimeout(() => finish(code, signal), PIPE_DRAIN_MS));
    });
    child.on("close", () => exit && finish(exit[0], exit[1]));
  });
}

/** What is kept of the hook's output: its first KEPT_OUTPUT_BYTES (stdout and stderr as they come), its size, the end of its stderr. */
function keptOutput(echo: ((chunk: Buffer) => void) | undefined) {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let outputBytes = 0;
  let stderrTail = Buffer.alloc(0);
  return {
    take(chunk: Buffer, stderr: boolean): void {
      outputBytes += chunk.length;
      if (keptBytes < KEPT_OUTPUT_BYTES) {
        const part = chunk.subarray(0, KEPT_OUTPUT_BYTES - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      if (stderr) stderrTail = Buffer.concat([stderrTail, chunk]).subarray(-STDERR_TAIL_BYTES);
      echo?.(chunk);
    },
    result(): { output: string; outputBytes: number; lastStderrLine?: string } {
      const output = new TextDecoder().decode(Buffer.concat(kept)).replace(/\uFFFD$/, "");
      const lastStderrLine = lastLine(stderrTail);
      return { output, outputBytes, ...(lastStderrLine ? { lastStderrLine } : {}) };
    },
  };
}

/** The last non-blank line of `tail` (text the hook wrote: shown escaped), cut to QUOTED_LINE_CHARS. */
function lastLine(tail: Buffer): string | undefined {
  const line = new TextDecoder().decode(tail).replace(/^\uFFFD+/, "").split("\n").map((text) => text.trim()).filter(Boolean).at(-1);
  if (line === undefined) return undefined;
  const chars = [...line];
  return shownText(chars.length > QUOTED_LINE_CHARS ? `${chars.slice(0, QUOTED_LINE_CHARS).join("")}…` : line);
}

/**
 * The one line a hook that did not succeed gets, ending with the last line it wrote to stderr
 * (`... exited with code 127: sh: 0: cannot open on-end/ntfy.sh: No such file`); undefined when it exited 0.
 */
export function hookProblem(result: HookResult, timeoutMs: number): string | undefined {
  const what = hookFailure(result, timeoutMs);
  if (what === undefined) return undefined;
  return `the --on-end command ${what}${result.lastStderrLine !== undefined && result.error === undefined ? `: ${result.lastStderrLine}` : ""}`;
}

/** The record's `run.hook` event of a result (the session or the guardian fills in v, time, run). */
export function hookEvent(result: HookResult, by: RunHookEvent["by"]): Extract<PartEvent, { type: "run.hook" }> {
  const { lastStderrLine: _, ...recorded } = result;
  return { type: "run.hook", hook: "on-end", by, ...recorded };
}
