import { setTimeout as sleep } from "node:timers/promises";
import { spawn } from "node:child_process";
import { lstatSync, unlinkSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { fsReason, LoopxError } from "../core/errors.js";
import { parseRecord } from "../records/parse.js";
import { summarizeRun } from "../records/run-state.js";
import { selfCommand } from "../runtime/platform/runtime.js";
import { readRecordText, recordsDir, runProcessAlive } from "../records/store.js";
import { isWholeRunId, resolveRunId } from "../records/run-id.js";
import { controlDirs, knownRunIds, socketName } from "./paths.js";
import type { ControlReply, ControlRequest } from "./protocol.js";
import { prepareResume } from "./resume.js";
import { otherOwner } from "../os/own-user.js";
import type { Env } from "../core/env.js";

/**
 * Steering a run from another process (loopx's own addition): `loopx runs stop|pause|continue`,
 * the dashboard, anyone with the run's id (or a unique prefix of it) — as the user who started
 * the run; nobody else can reach its control channel (control/paths.ts).
 */


/** What the dashboard (and anyone else) steers runs through; each call resolves with what happened, in words. */
export interface ControlChannel {
  stop(id: string, options: { now: boolean }): Promise<string>;
  pause(id: string): Promise<string>;
  continue(id: string): Promise<string>;
  /** Resumes a run detached from the caller (see resumeDetached). */
  resume(id: string): Promise<string>;
}

export function createControlChannel(env: Env = process.env): ControlChannel {
  return {
    stop: (id, { now }) => requestControl(env, id, { op: "stop", now }),
    pause: (id) => requestControl(env, id, { op: "pause" }),
    continue: (id) => requestControl(env, id, { op: "continue" }),
    resume: (id) => resumeDetached(env, id),
  };
}

const REPLY_TIMEOUT_MS = 5000;

/** The full id for `prefix`, among the runs with a control channel and the recorded ones. */
function steerableRunId(env: Env, prefix: string): string {
  const unreadable: string[] = [];
  const ids = knownRunIds(env, unreadable);
  // A whole id needs no listing (and works where the directories cannot be listed).
  if (ids.size === 0 && unreadable.length > 0 && !isWholeRunId(prefix)) throw new LoopxError(`cannot look for run ${JSON.stringify(prefix)}: ${unreadable[0]}`);
  return resolveRunId(prefix, [...ids], recordsDir(env), true);
}

/** Why a run without a live control channel cannot be steered, from its record. */
function notSteerable(env: Env, id: string): LoopxError {
  const dir = recordsDir(env);
  let text: string;
  try {
    text = readRecordText(dir, id);
  } catch {
    return new LoopxError(`run ${id} is not running (no control channel and no record of it)`);
  }
  const summary = summarizeRun(id, parseRecord(text).events, runProcessAlive, Date.now());
  if (!summary) return new LoopxError(`run ${id} is not running`);
  if (summary.state === "crashed") return new LoopxError(`run ${id} is not running: process ${summary.pid} is gone without run.end (loopx runs resume ${id})`);
  if (summary.ending !== undefined) return new LoopxError(`run ${id} has ended (${summary.ending})`);
  return new LoopxError(`run ${id} has no control channel (started with LOOPX_CONTROL=0, or by a loopx without one)`);
}

/** Sends one request to run `prefix`'s control channel; resolves with its answer, rejects with a one-line LoopxError. */
export async function requestControl(env: Env, prefix: string, request: ControlRequest): Promise<string> {
  const id = steerableRunId(env, prefix);
  for (const dir of controlDirs(env)) {
    const path = join(dir, socketName(id));
    let owner: number | undefined;
    try {
      const stat = lstatSync(path);
      if (!stat.isSocket()) continue;
      owner = otherOwner(stat);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") continue;
      throw new LoopxError(`cannot reach the control channel of run ${id}: ${fsReason(error)}`);
    }
    if (owner !== undefined) throw new LoopxError(`run ${id} belongs to another user (uid ${owner}): loopx steers only your own runs`);
    const reply = await exchange(path, request).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNREFUSED" || error.code === "ENOENT") {
        // The run died without removing its socket.
        try {
          unlinkSync(path);
        } catch {
          // Gone meanwhile.
        }
        return undefined;
      }
      throw new LoopxError(`cannot reach the control channel of run ${id}: ${error instanceof LoopxError ? error.message : fsReason(error)}`);
    });
    if (reply === undefined) break;
    if (!reply.ok) throw new LoopxError(reply.message);
    return reply.message;
  }
  throw notSteerable(env, id);
}

/** One request to the control socket at `path`, and its reply; rejects when there is none within `timeoutMs`. */
export function exchange(path: string, request: ControlRequest, timeoutMs = REPLY_TIMEOUT_MS): Promise<ControlReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let data = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new LoopxError(`no answer within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    socket.setEncoding("utf8");
    socket.on("connect", () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on("data", (chunk: string) => (data += chunk));
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      try {
        const reply = JSON.parse(data.split("\n")[0]!) as ControlReply;
        if (typeof reply.ok === "boolean" && typeof reply.message === "string") return resolve(reply);
      } catch {
        // Below.
      }
      reject(new LoopxError("the run closed its control channel without an answer"));
    });
  });
}

const RESUME_START_MS = 10_000;

/**
 * `resume` for callers that are not a terminal (the dashboard): checks the resume as `loopx runs
 * resume` would (a refusal rejects with its line), then starts `loopx runs resume <id>` as a
 * detached process of its own — its own session, stdin/stdout/stderr on /dev/null, in the run's
 * project — and resolves once its record shows the `run.resume` of that process. It goes on after
 * the caller exits; `loopx runs tail <id>` follows it and `loopx runs stop <id>` ends it.
 */
export async function resumeDetached(env: Env, prefix: string): Promise<string> {
  const { point } = prepareResume(env, prefix);
  const id = point.runId;
  const [exe, ...args] = selfCommand("runs", "resume", id);
  const child = spawn(exe!, args, {
    cwd: point.start.projectRoot,
    env: env as NodeJS.ProcessEnv,
    detached: true,
    stdio: "ignore",
  });
  child.unref();
  const pid = child.pid;
  let exited: number | null | undefined;
  child.on("exit", (code) => (exited = code ?? null));
  child.on("error", () => (exited = null));
  const deadline = Date.now() + RESUME_START_MS;
  while (Date.now() < deadline) {
    await sleep(50);
    const events = parseRecord(readRecordText(recordsDir(env), id)).events;
    if (events.some((event) => event.type === "run.resume" && event.pid === pid)) return `run ${id} resumed at ${point.target}, iteration ${point.n} (pid ${pid}, detached)`;
    if (exited !== undefined) throw new LoopxError(`the resume of run ${id} ended at once${exited === null ? "" : ` (exit ${exited})`}: see loopx runs show ${id}`);
  }
  throw new LoopxError(`the resume of run ${id} did not start within ${RESUME_START_MS / 1000} s`);
}
