import type { IterationEndEvent, IterationStartEvent, WarningEvent } from "./events.js";
import type { Output } from "./output.js";
import { eventBase, outputForEvent } from "./run-events.js";

/** What the engine saw of an iteration's script when it ended (successfully with `output`, or with `error`). */
export interface ScriptResult {
  exitCode: number | null;
  signal: string | null;
  stdoutBytes: number;
  output?: Output;
  error?: string;
  stderr?: string;
}

/**
 * The iterations of one run (see RunSession): their count (a resumed run goes on from its
 * earlier sittings' count), the latest one's script and start, and the events that tell of them.
 */
export class Iterations {
  private startedAt = 0;
  private target = "";

  constructor(
    private readonly run: string,
    /** Iterations started so far. */
    public count: number,
  ) {}

  /** The next iteration starts with `target`: its `iteration.start`. */
  start(target: string): IterationStartEvent {
    const n = ++this.count;
    this.startedAt = Date.now();
    this.target = target;
    return { ...eventBase("iteration.start", this.run), n, target };
  }

  /** The latest iteration's script has ended: its `iteration.end`. */
  end(result: ScriptResult): IterationEndEvent {
    return {
      ...eventBase("iteration.end", this.run),
      n: this.count,
      target: this.target,
      durationMs: Date.now() - this.startedAt,
      exitCode: result.exitCode,
      signal: result.signal,
      stdoutBytes: result.stdoutBytes,
      ...(result.output ? { output: outputForEvent(result.output) } : {}),
      ...(result.error !== undefined ? { error: result.error } : {}),
      ...(result.stderr ? { stderr: result.stderr } : {}),
    };
  }

  /** loopx's own warning about the latest iteration's script. */
  warning(kind: WarningEvent["kind"], message: string): WarningEvent {
    return { ...eventBase("warning", this.run), kind, n: this.count, target: this.target, message };
  }
}
