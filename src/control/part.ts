import { chmodSync, lstatSync, readdirSync, unlinkSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { fsReason, LoopxError } from "../core/errors.js";
import type { RunControls, RunPart } from "../core/run-session.js";
import { controlDirs, fitsSocketAddress, privateDir, removeMadeDirs, socketName } from "./paths.js";
import { MAX_REQUEST_BYTES, type ControlReply, type ControlRequest } from "./protocol.js";

/**
 * The run's control channel (loopx's own addition): a Unix socket in a private directory
 * (control/paths.ts) through which `loopx runs stop|pause|continue` and the dashboard steer the
 * run from another process. Opened when the run begins, removed when it ends. Costs nothing per
 * iteration: `beforeScript` returns at once unless a stop or a pause was asked for, and the
 * socket is only read when someone connects. The server does not keep a process alive, except
 * while the run is paused (nothing else may then be pending).
 */

/** Asked for between two scripts only: there is no process group to end. */
const STOP = { reason: "stopped-on-request", exitCode: 0 } as const;

export function controlPart(env: Record<string, string | undefined>): RunPart {
  let controls: RunControls | undefined;
  let server: Server | undefined;
  let path: string | undefined;
  /** The directories made for the socket, removed with it when empty. */
  let made: string | undefined;
  /** The script running now, if one is. */
  let running: string | undefined;
  let stopping = false;
  let pause: { since: number; release: () => void; held: Promise<void> } | undefined;

  /** A held script goes on (to start, or to see the stop). */
  const unpause = () => {
    if (!pause) return;
    pause.release();
    pause = undefined;
    server?.unref();
  };

  const handle = (request: ControlRequest): ControlReply => {
    const id = controls!.id;
    switch (request.op) {
      case "stop": {
        if (request.now === true) {
          const message = "interrupted by loopx runs stop --now";
          controls!.emit({ type: "run.stop", now: true, ...(running ? { running } : {}) });
          void controls!.cancel({ reason: "interrupted", signal: "SIGINT", exitCode: 130, message, error: new LoopxError(message, 130) });
          unpause();
          return { ok: true, message: `run ${id} is interrupted now${running ? ` (${running} gets SIGINT)` : ""}` };
        }
        if (stopping) return { ok: true, message: `run ${id} is already stopping` };
        stopping = true;
        controls!.emit({ type: "run.stop", now: false, ...(running ? { running } : {}) });
        unpause();
        if (running) return { ok: true, message: `run ${id} stops after ${running} finishes` };
        return { ok: true, message: `run ${id} stops before its next script` };
      }
      case "pause": {
        if (stopping) return { ok: false, message: `run ${id} is stopping: nothing to pause` };
        if (pause) return { ok: true, message: `run ${id} is already paused (loopx runs continue ${id})` };
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        pause = { since: Date.now(), release, held };
        server?.ref();
        controls!.emit({ type: "run.pause", ...(running ? { running } : {}) });
        return { ok: true, message: running ? `run ${id} pauses after ${running} finishes (loopx runs continue ${id})` : `run ${id} is paused (loopx runs continue ${id})` };
      }
      case "continue": {
        if (!pause) return { ok: false, message: `run ${id} is not paused` };
        const pausedMs = Date.now() - pause.since;
        unpause();
        controls!.emit({ type: "run.continue", pausedMs });
        return { ok: true, message: `run ${id} continues` };
      }
      default:
        return { ok: false, message: `unknown control request ${JSON.stringify((request as { op?: unknown }).op)}` };
    }
  };

  const serve = (socket: Socket) => {
    let data = "";
    socket.setEncoding("utf8");
    socket.on("error", () => undefined);
    socket.on("data", (chunk: string) => {
      data += chunk;
      const newline = data.indexOf("\n");
      if (newline < 0) {
        if (data.length > MAX_REQUEST_BYTES) socket.destroy();
        return;
      }
      let reply: ControlReply;
      try {
        reply = controls ? handle(JSON.parse(data.slice(0, newline)) as ControlRequest) : { ok: false, message: "the run is not going" };
      } catch {
        reply = { ok: false, message: "not a control request" };
      }
      socket.end(`${JSON.stringify(reply)}\n`);
    });
  };

  return {
    async begin(runControls) {
      controls = runControls;
      try {
        ({ server, path, made } = await listen(env, runControls.id, serve));
      } catch (error) {
        runControls.warn(`cannot open the run's control channel (loopx runs stop/pause/continue): ${error instanceof Error ? error.message : String(error)}; the run goes on without it`);
      }
    },
    onEvent(event) {
      if (event.type === "iteration.start") running = event.target;
      else if (event.type === "iteration.end") running = undefined;
    },
    beforeScript() {
      if (stopping) {
        void controls?.cancel(STOP);
        return;
      }
      if (pause) return pause.held.then(() => void (stopping && controls?.cancel(STOP)));
    },
    async end() {
      unpause();
      controls = undefined;
      const closing = server;
      server = undefined;
      if (!closing) return;
      await new Promise<void>((resolve) => closing.close(() => resolve()));
      try {
        unlinkSync(path!);
      } catch {
        // Removed by the runtime when it closed the server.
      }
      removeMadeDirs(dirname(path!), made);
    },
  };
}

/**
 * Listens on `<dir>/<run id>.sock` in the first private directory whose path fits (a socket left
 * there by the same run — it died and is resumed — is replaced); unref'd. Sockets of runs that died
 * in the same directory are removed in passing.
 */
async function listen(env: Record<string, string | undefined>, runId: string, serve: (socket: Socket) => void): Promise<{ server: Server; path: string; made: string | undefined }> {
  const problems: string[] = [];
  for (const dir of controlDirs(env)) {
    const path = join(dir, socketName(runId));
    if (!fitsSocketAddress(path)) {
      problems.push(`${path} is too long for a socket`);
      continue;
    }
    let made: string | undefined;
    try {
      made = privateDir(dir);
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
      continue;
    }
    try {
      if (lstatSync(path).isSocket()) unlinkSync(path);
    } catch {
      // Not there: the usual case.
    }
    const server = createServer(serve);
    const listening = () =>
      new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(path, () => {
          server.off("error", reject);
          resolve();
        });
      });
    try {
      await listening().catch((error: NodeJS.ErrnoException) => {
        // Another run's end removed the directory, empty, between our mkdir and listen: again.
        if (error.code !== "ENOENT") throw error;
        made = privateDir(dir) ?? made;
        return listening();
      });
    } catch (error) {
      problems.push(`cannot listen on ${path}: ${fsReason(error)}`);
      continue;
    }
    server.on("error", () => undefined);
    server.unref();
    try {
      chmodSync(path, 0o600);
    } catch {
      // The directory is what keeps others out.
    }
    sweepDeadSockets(dir, path);
    return { server, path, made };
  }
  throw new LoopxError(problems.join("; "));
}

/** Removes sockets nobody listens on any more (runs that were killed), without waiting for it. */
function sweepDeadSockets(dir: string, own: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const old = Date.now() - 60_000;
  for (const name of names.slice(0, 64)) {
    const path = join(dir, name);
    if (path === own || !name.endsWith(".sock")) continue;
    try {
      // A socket made this minute may belong to a run that is just starting to listen.
      if (lstatSync(path).mtimeMs > old) continue;
    } catch {
      continue;
    }
    const probe = connect(path);
    probe.unref();
    probe.on("connect", () => probe.destroy());
    probe.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNREFUSED") {
        try {
          unlinkSync(path);
        } catch {
          // Gone meanwhile.
        }
      }
    });
  }
}
