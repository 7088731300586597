import type { Cancellation } from "./run-cancel.js";
import type { NextScript, RunControls, RunPart } from "./run-part.js";

/**
 * The parts of a run that act on each script (see RunSession): those that may hold it back
 * (RunPart.beforeScript) and those that give it variables (RunPart.scriptEnv). Usually none: a run
 * without them pays nothing.
 */
export class ScriptParts {
  /** The parts that may hold back the next script; empty for nearly every run. */
  private readonly gates: RunPart[];
  /** The parts with per-script variables; usually none. */
  private readonly envParts: RunPart[];

  constructor(
    parts: readonly RunPart[],
    private readonly cancels: Cancellation,
  ) {
    this.gates = parts.filter((part) => part.beforeScript !== undefined);
    this.envParts = parts.filter((part) => part.scriptEnv !== undefined);
  }

  get gated(): boolean {
    return this.gates.length > 0;
  }

  /** Sets (or removes, when undefined) the parts' own variables in `env`; LOOPX_* stay loopx's. */
  scriptEnv(env: Record<string, string | undefined>, n: number): Record<string, string | undefined> {
    for (const part of this.envParts) {
      for (const [name, value] of Object.entries(part.scriptEnv!(n))) {
        if (name.startsWith("LOOPX_")) continue;
        if (value === undefined) delete env[name];
        else env[name] = value;
      }
    }
    return env;
  }

  /** Asks every gate; a promise only when one of them holds the script back. A cancellation releases it. */
  beforeScript(script: NextScript, controls: RunControls): void | Promise<void> {
    for (let i = 0; i < this.gates.length; i++) {
      const held = this.gates[i]!.beforeScript!(script, controls);
      if (held) return this.hold(held, script, controls, i + 1);
    }
  }

  private async hold(held: Promise<void>, script: NextScript, controls: RunControls, from: number): Promise<void> {
    const whenCancelled = this.cancels.whenCancelled;
    if (this.cancels.decided) return;
    await Promise.race([held, whenCancelled]);
    for (let i = from; i < this.gates.length && !this.cancels.decided; i++) {
      const more = this.gates[i]!.beforeScript!(script, controls);
      if (more) await Promise.race([more, whenCancelled]);
    }
  }
}
