import { runLoop } from "../core/loop.js";
import type { Output } from "../core/output.js";
import type { RunCancel, RunEnd } from "../core/run-part.js";
import type { RunSession } from "../core/run-session.js";
import { ScriptSupervisor } from "../runtime/supervisor.js";
import type { RunWorktree } from "../worktree/part.js";
import { createLoopHost } from "./host.js";
import { loopOptions, planRun, type RunPlan, type RunRequest } from "./plan.js";
import { createRunId } from "./run-id.js";
import { EngineSandbox } from "./sandbox.js";
import { createSession } from "./session.js";
import { worktreeStart } from "./worktree.js";

/**
 * How far the making of a run got: waiting for its --worktree (made on the first `next()`, since
 * the session and the loop run in its project root), built (a session and a loop), or not built —
 * the request was invalid, the worktree or the session could not be made (`error`), or a
 * cancellation came before the worktree was done (`error` undefined: the cancellation says it).
 */
type Stage =
  | { step: "worktree"; create: () => Promise<RunWorktree> }
  | { step: "built"; session: RunSession; loop: AsyncGenerator<Output, void, undefined> }
  | { step: "unbuilt"; error: unknown };

/**
 * What a run is made of, apart from how its consumer drives it (EngineRun, index.ts): the plan,
 * the supervisor, the worktree and the sandbox, the session and the loop, and where their making
 * stands. Until a session exists the first cancellation is kept here; the session takes every
 * later one.
 */
export class RunSetup {
  readonly supervisor = new ScriptSupervisor();
  readonly plan: RunPlan | undefined;
  /** --sandbox: proved on the first `next()`, before the session begins (its run.start names it). */
  readonly fence: EngineSandbox | undefined;
  /** A cancellation before the session existed (the request was invalid, or the worktree not yet made). */
  earlyCancel: RunCancel | undefined;
  /** The target of the latest script started (for the CLI's Ctrl-C line). */
  target: string | undefined;
  private stage: Stage;
  private readonly id: string | undefined;
  private worktree: RunWorktree | undefined;

  constructor(request: RunRequest) {
    try {
      this.plan = planRun(request);
      this.id = this.plan.resume?.runId ?? createRunId();
      const worktree = worktreeStart(this.plan, this.id);
      this.worktree = worktree.adopted;
      this.fence = EngineSandbox.of(this.plan);
      this.stage = worktree.create ? { step: "worktree", create: worktree.create } : this.build();
    } catch (error) {
      this.stage = { step: "unbuilt", error };
    }
  }

  get session(): RunSession | undefined {
    return this.stage.step === "built" ? this.stage.session : undefined;
  }

  get loop(): AsyncGenerator<Output, void, undefined> | undefined {
    return this.stage.step === "built" ? this.stage.loop : undefined;
  }

  /** Why the run could not be built (undefined once built, or while its worktree is awaited). */
  get error(): unknown {
    return this.stage.step === "unbuilt" ? this.stage.error : undefined;
  }

  get awaitsWorktree(): boolean {
    return this.stage.step === "worktree";
  }

  /** Where the run's scripts run: its worktree's root, when it has one. */
  get projectRoot(): string {
    return this.worktree?.projectRoot ?? this.plan!.projectRoot;
  }

  get cancellation(): RunCancel | undefined {
    const session = this.session;
    return session ? session.cancellation : this.earlyCancel;
  }

  cancel(cancel: RunCancel): Promise<void> {
    const session = this.session;
    if (session) return session.cancel(cancel);
    this.earlyCancel ??= cancel;
    return cancel.signal ? this.supervisor.terminate(cancel.signal) : Promise.resolve();
  }

  /**
   * --worktree: the worktree is made before anything else of the run exists; a cancellation that
   * came meanwhile removes it again (nothing ran in it) and the run never begins.
   */
  async makeWorktree(): Promise<void> {
    if (this.stage.step !== "worktree") return;
    const { create } = this.stage;
    this.stage = { step: "unbuilt", error: undefined };
    try {
      this.worktree = await create();
    } catch (error) {
      this.stage = { step: "unbuilt", error };
      return;
    }
    if (this.earlyCancel) return void (await this.worktree.finish());
    try {
      this.stage = this.build();
    } catch (error) {
      this.stage = { step: "unbuilt", error };
    }
  }

  /**
   * How the run ended: the session's ending when it began (a cancellation wins over what the loop
   * saw), else the early cancellation, else `seen`; then the worktree and the sandbox are let go
   * (a run that failed before it began, discovery in the worktree, never ended its parts).
   */
  async end(seen: RunEnd): Promise<RunEnd> {
    const early = this.earlyCancel;
    const session = this.session;
    const end: RunEnd = session
      ? await session.end(seen)
      : early
        ? { reason: early.reason, exitCode: early.exitCode, signal: early.signal, ...(early.error !== undefined ? { error: early.error } : {}) }
        : seen;
    await this.worktree?.finish();
    this.fence?.release();
    return end;
  }

  /** The run's session and loop, once its project root is known (its worktree's, when it has one). */
  private build(): Stage {
    const plan = this.plan!;
    const session = createSession(plan, this.worktree, {
      id: this.id!,
      supervisor: this.supervisor,
      fence: this.fence,
      onTarget: (target) => (this.target = target),
    });
    const loop = runLoop({ ...loopOptions(plan), projectRoot: this.projectRoot }, createLoopHost(this.supervisor), session);
    return { step: "built", session, loop };
  }
}
