import type { RunPart } from "../core/run-part.js";
import { spawnWatcher } from "../runtime/platform/index.js";
import { dropFifoDir, fifoDirForHelper, helperFifosMade } from "../runtime/stdout-pipe.js";
import { guardianCommand } from "../runtime/platform/runtime.js";
import { SHELL_READ_DEAD_PARENT } from "../os/procfs.js";
import type { Watcher } from "../runtime/spawn.js";
import { onProcessEnd } from "../os/exit-hooks.js";
import type { TmpdirPart } from "../parts/tmpdir.js";
import type { OnEndPart } from "../hooks/part.js";
import type { DeadRun } from "../hooks/dead-run.js";

/**
 * The run's guardian (loopx's own addition): a small process, started once per run, that closes
 * the run when loopx itself dies without doing so — SIGKILL, an out-of-memory kill, a crash, a
 * host process of `run()` that exits. It then ends what is left of the run's processes, removes
 * LOOPX_TMPDIR and appends `run.end` to the run's record (src/guardian/guardian.ts does that work).
 *
 * It is a `/bin/sh` that blocks reading a pipe whose write end only loopx holds (close-on-exec,
 * so no script inherits it): no polling, no per-iteration cost, ~1 MB while it waits. A normal
 * ending writes "done" (the guardian exits with no work and no output); end of file without
 * "done" means loopx is gone, and only then does the guardian exec loopx's own runtime to do the
 * work. loopx's exit hooks write how it is going ("signal SIGHUP", "exit 1") when they can run.
 *
 * The guardian leads its own session (no terminal: a closed terminal's SIGHUP or Ctrl-C in it do
 * not reach it), has no stdout/stderr (it never holds loopx's terminal or pipes open), runs in `/`
 * and does not carry LOOPX_RUN_ID (no stray scan, its own run's or an outer run's, ends it).
 */

/** What the guardian needs to know about the run; given to it as JSON on its command line. */
export interface GuardedRun {
  run: string;
  /** ms since 1970: the run's start, for the duration when there is no record to read it from. */
  startedAt: number;
  /** LOOPX_TMPDIR and its identity (bigints as decimal strings). */
  scratch?: { path: string; dev: string; ino: string; birth: string };
  /** The run's records directory (its record is `<run>.jsonl` there), when it is recorded. */
  records?: string;
  /** The `--log` file, if any: run.end is appended to it too. */
  log?: string;
  /**
   * The run has an end-of-run hook (src/hooks): what the guardian tells it of the run when there is
   * no record to read. The command and its environment are the guardian's own environment
   * (LOOPX_ON_END, LOOPX_ON_END_TIMEOUT): never on a command line others can read.
   */
  onEnd?: DeadRun["onEnd"];
}

/**
 * The waiting guardian. `$0` is its name, "$@" the command to exec once loopx is gone. The last
 * line that is not "done" says how loopx ended, if its exit hooks could tell; loopx's stat line,
 * read at once, may still hold its wait status before its parent reaps it, and the uptime read
 * with it says when that was (Linux: the grace counts from loopx's death, not from the moment the
 * runtime that does the work has started, which a loaded machine can delay).
 */
/** How long a run's end waits for its guardian to go after "done". */
const GUARDIAN_EXIT_WAIT_MS = 1_000;

const WAITING_SH = `fifos=$LOOPX_GUARDIAN_FIFOS
unset LOOPX_GUARDIAN_FIFOS
[ -z "$fifos" ] || { mkfifo -m 600 "$fifos/fifo-1" "$fifos/fifo-2" 2>/dev/null; : > "$fifos/made"; }
drop_fifos() { [ ! -d "$fifos" ] || rm -rf "$fifos"; }
ending=
hooked=
n=
while IFS= read -r line; do
  [ "$line" = done ] && { drop_fifos; exit 0; }
  [ "$line" = hooked ] && hooked=1 && continue
  case $line in "iteration "*) n=\${line#iteration }; continue;; esac
  ending=$line
done
${SHELL_READ_DEAD_PARENT}
drop_fifos
exec "$@" "$ending" "$stat" "$up" "$hooked" "$n"`;

/** With a hook, the guardian's environment is the hook's (the run's, without its id); and the FIFO directory. */
function guardianEnv(hook: OnEndPart["spec"] | undefined, fifos: string | undefined): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = hook ? { ...hook.env, LOOPX_ON_END: hook.command, LOOPX_ON_END_TIMEOUT: `${hook.timeoutMs}ms` } : { ...process.env };
  delete env.LOOPX_RUN_ID; // an outer run's id: its stray scan must not end this run's guardian
  if (fifos !== undefined) env.LOOPX_GUARDIAN_FIFOS = fifos;
  return env;
}

/**
 * The guardian part. After the scratch directory (it needs its identity) and the end-of-run hook
 * (it needs its command); its `run.end` observer must come after the record's, so that "done" is
 * only said once the record is closed. `hooked()` tells it the hook has started: it must not run
 * it again if loopx dies now.
 */
export function guardianPart(options: { tmpdir: TmpdirPart; recordsDir?: string; log?: string; onEnd?: OnEndPart }): RunPart & { hooked(): void; pid(): number | undefined } {
  let guardian: Watcher | undefined;
  let start: { project: string; target: string; startedAt: string; maxIterations: number | null } | undefined;
  let removeExitHook: (() => void) | undefined;
  let leaving: Watcher | undefined;
  let fifos: string | undefined;
  return {
    hooked() {
      guardian?.send("hooked");
    },
    pid: () => guardian?.pid,
    begin(controls) {
      const scratch = options.tmpdir.scratch;
      const hook = options.onEnd?.spec;
      const guarded: GuardedRun = {
        run: controls.id,
        startedAt: Date.now(),
        ...(scratch ? { scratch: { path: scratch.path, dev: String(scratch.dev), ino: String(scratch.ino), birth: String(scratch.birth) } } : {}),
        ...(options.recordsDir !== undefined ? { records: options.recordsDir } : {}),
        ...(options.log !== undefined ? { log: options.log } : {}),
        ...(hook && start ? { onEnd: { ...start, ...(hook.cwd !== undefined ? { cwd: hook.cwd } : {}) } } : {}),
      };
      // The guardian's shell makes the run's first FIFOs (stdout-pipe.ts fifoDirForHelper): loopx
      // then starts no mkfifo of its own.
      fifos = fifoDirForHelper();
      const env = guardianEnv(hook, fifos);
      const warn = (error: unknown) => controls.warn(`cannot start the run's guardian: ${error instanceof Error ? error.message : String(error)}; the run goes on without it`);
      try {
        guardian = spawnWatcher("/bin/sh", ["-c", WAITING_SH, "loopx-guardian", ...guardianCommand(), JSON.stringify(guarded)], env, warn);
      } catch (error) {
        warn(error);
        return;
      }
      // At the last moment loopx can run code (process.exit(), an uncaught exception, a signal
      // nobody else handles), the hook says how it is going, synchronously. One set of process
      // listeners serves every run of the process (exit-hooks.ts).
      removeExitHook = onProcessEnd((code, signal) => void guardian?.send(signal ? `signal ${signal}` : `exit ${code ?? 0}`));
      // The first script takes the FIFOs: wait until the shell has made them (a few ms).
      if (fifos !== undefined) return helperFifosMade(fifos, GUARDIAN_EXIT_WAIT_MS);
    },
    onEvent(event) {
      if (event.type === "run.start" || event.type === "run.resume") {
        start = { project: event.projectRoot, target: event.target, startedAt: event.time, maxIterations: event.maxIterations };
      }
      // With no record to read it from, the guardian is told each iteration's number (one short
      // line on its pipe), so that a run it closes has the right count.
      if (event.type === "iteration.start" && options.recordsDir === undefined) guardian?.send(`iteration ${event.n}`);
      if (event.type !== "run.end") return;
      if (fifos !== undefined) dropFifoDir(fifos);
      removeExitHook?.();
      guardian?.send("done");
      guardian?.close();
      leaving = guardian;
      guardian = undefined;
    },
    // The guardian reads "done" and exits within milliseconds; the run's end waits for that (at
    // most a second) so that no process of the run is left when loopx returns.
    settle: () => leaving?.exited(GUARDIAN_EXIT_WAIT_MS) ?? Promise.resolve(),
  };
}
