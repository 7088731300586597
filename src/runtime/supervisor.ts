import { LoopxError } from "../core/errors.js";
import { groupAlive, signalGroup, waitForGroupExit } from "../os/process-group.js";
import { hasProcfs, processRunning } from "../os/procfs.js";
import { spawnScript } from "./platform/index.js";
import type { ScriptExit, ScriptProcess, SpawnSpec } from "./spawn.js";

/** Grace period between forwarding a signal to a script's group and SIGKILLing it (spec §7.3). */
export const KILL_GRACE_MS = 5000;

/**
 * Thrown by `run` once termination has begun: no new script may start after that. The run's
 * cancellation decides how it ends; this only ends the iteration that could not start.
 */
class SupervisorStoppedError extends LoopxError {
  constructor() {
    super("loop terminated");
    this.name = "SupervisorStoppedError";
  }
}

/**
 * Owns "the active child": the one script process group running at any time. The CLI's signal
 * handlers and the API's break/abort both stop a loop through this object, so there is exactly one
 * implementation of forward-signal → grace → SIGKILL.
 */
export class ScriptSupervisor {
  private active: ScriptProcess | undefined;
  private termination: Promise<void> | undefined;
  private killAt: number | undefined;
  /** Rewrites each script's command line before it starts (a `--sandbox` run's fence); none: as given. */
  wrap: ((spec: SpawnSpec) => SpawnSpec) | undefined;

  /**
   * When the running termination's grace period ends (ms since 1970; the group is SIGKILLed then),
   * undefined if no group was being terminated. Whatever else must end with the run shares it.
   */
  get graceEndsAt(): number | undefined {
    return this.killAt;
  }

  /**
   * True when the running script's own process has exited (a zombie not yet reaped, or gone)
   * while loopx still reads its stdout. False when no script process runs — an iteration that
   * has not spawned its script yet has nothing that finished in time — and where /proc cannot tell.
   */
  get scriptExited(): boolean {
    const pid = this.active?.pid;
    if (pid === undefined) return false;
    return hasProcfs() && !processRunning(pid);
  }

  /** True while a script's process group is running (or being terminated). */
  get running(): boolean {
    return this.active !== undefined;
  }

  /**
   * Ends the grace of a termination now (a second Ctrl-C): SIGKILL to the group at once, and
   * `graceEndsAt` becomes now, for whatever else shares it (strays). No-op unless terminating.
   */
  killNow(): void {
    if (!this.termination || this.killAt === undefined) return;
    this.killAt = Math.min(this.killAt, Date.now());
    if (this.active?.pid !== undefined) signalGroup(this.active.pid, "SIGKILL");
  }

  /**
   * Stops (SIGSTOP) or continues (SIGCONT) the running script's group, for Ctrl-Z and `fg`. Not
   * SIGTSTP: the group is in a session of its own with no terminal (an orphaned group), where the
   * kernel discards the terminal stop signals.
   */
  suspend(stop: boolean): void {
    if (this.active?.pid !== undefined) signalGroup(this.active.pid, stop ? "SIGSTOP" : "SIGCONT");
  }

  async run(spec: SpawnSpec): Promise<ScriptExit> {
    if (this.termination) throw new SupervisorStoppedError();
    // Who holds a script's stdout is worth a word only while nobody is ending the script.
    const onHeld = spec.onStdoutHeld;
    if (onHeld) spec = { ...spec, onStdoutHeld: (holders) => this.termination === undefined && onHeld(holders) };
    const proc = spawnScript(this.wrap ? this.wrap(spec) : spec);
    this.active = proc;
    try {
      return await proc.done;
    } finally {
      if (this.active === proc) this.active = undefined;
    }
  }

  /**
   * Forwards `signal` to the active process group, waits up to the grace period for the whole
   * group (grandchildren included) to exit, then SIGKILLs the group. Resolves when no process of
   * the group is left. Later calls forward their signal too and share the first call's deadline.
   */
  terminate(signal: NodeJS.Signals, graceMs: number = KILL_GRACE_MS): Promise<void> {
    const proc = this.active;
    const pgid = proc?.pid;
    if (this.termination) {
      if (pgid !== undefined) signalGroup(pgid, signal);
      return this.termination;
    }
    if (pgid === undefined) {
      this.termination = Promise.resolve();
      return this.termination;
    }
    signalGroup(pgid, signal);
    this.killAt = Date.now() + graceMs;
    this.termination = (async () => {
      const exitedInTime = await waitForGroupExit(pgid, graceMs);
      if (!exitedInTime) signalGroup(pgid, "SIGKILL");
      // The group is gone; a process that left it may still hold stdout (the strays part ends it).
      proc!.stopReading();
      await proc!.done;
      // SIGKILL cannot be ignored; wait briefly for the kernel to finish tearing the group down.
      if (groupAlive(pgid)) await waitForGroupExit(pgid, 1000);
    })();
    return this.termination;
  }
}
