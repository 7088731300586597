import type { LoopEvent, SandboxInfo } from "../core/events.js";
import type { RunControls, RunPart } from "../core/run-part.js";
import type { ScriptSupervisor } from "../runtime/supervisor.js";
import type { Sandbox } from "../sandbox/part.js";
import type { RunPlan } from "./plan.js";

/**
 * A `--sandbox` run's fence, as the engine composes it: proved (sandbox/part.ts) once the run's
 * project root is known and before its session begins, so that `run.start` carries it. A fence
 * that cannot be proven fails the run at its first part, before any other part begins: the record
 * holds `run.start` and `run.end` with the refusal, and nothing ran.
 */
export class EngineSandbox implements RunPart {
  private sandbox: Sandbox | undefined;
  private refusal: unknown;
  private preparing: Promise<void> | undefined;

  private constructor(private readonly plan: RunPlan) {}

  /** The fence a plan asks for, or undefined (no --sandbox, or --sandbox=off: nothing of it exists). */
  static of(plan: RunPlan | undefined): EngineSandbox | undefined {
    return plan?.options.sandbox === "on" ? new EngineSandbox(plan) : undefined;
  }

  /** What `run.start` records: the proven fence, none until then (nor for a refusal). */
  get info(): SandboxInfo | undefined {
    return this.sandbox?.info;
  }

  /** Sets up and proves the fence, once; the supervisor then wraps every script in it. A refusal is kept for `begin`. */
  prepare(projectRoot: string, supervisor: ScriptSupervisor): Promise<void> {
    this.preparing ??= (async () => {
      const target = String(this.plan.resume?.target ?? this.plan.target ?? "");
      try {
        // Loaded only for a fenced run: without --sandbox nothing of the fence is loaded.
        const { Sandbox } = await import("../sandbox/part.js");
        this.sandbox = await Sandbox.prepare({ projectRoot, workflow: target.split(":")[0] || undefined, rules: this.plan.options.sandboxAllow ?? [], env: this.plan.baseEnv });
        supervisor.wrap = this.sandbox.wrap;
      } catch (error) {
        this.refusal = error;
      }
    })();
    return this.preparing;
  }

  /** First of the run's parts: its begin throws the refusal, before any other part begins; else it is the fence's part. */
  begin(controls: RunControls): void {
    if (!this.sandbox) throw this.refusal;
    this.sandbox.begin(controls);
  }

  onEvent(event: LoopEvent): void {
    this.sandbox?.onEvent(event);
  }

  end(): void {
    this.sandbox?.end();
  }

  /** A run whose session never began (it failed before): the fence's far ends go. */
  release(): void {
    this.sandbox?.release();
  }
}
