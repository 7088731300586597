import { closeSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { LoopxError } from "../core/errors.js";
import type { LoopEvent } from "../core/events.js";
import type { NextScript, RunControls, RunPart } from "../core/run-part.js";
import { STALL_EXIT_CODE, StallTracker, stallMessage, type ProgressSignal } from "../core/stall.js";
import { findWorkspace, fingerprint, type Workspace } from "./fingerprint.js";
import { PROGRESS_PATH_VAR, progressFileName, progressSignal } from "./signal.js";

/**
 * The stall sensor (`loopx run --stall-after <n>`, RunOptions.stallAfter; loopx's own addition):
 * before each script but the first, the state the last iteration left — the workspace's
 * fingerprint (fingerprint.ts) and the progress signals its script sent (signal.ts) — is judged
 * (core/stall.ts). After `n` flat iterations in a row no further script starts: one `run.stall`
 * event with the evidence, and the run ends "stalled" with exit code STALL_EXIT_CODE. Only a run
 * with the option has this part: no other run pays anything.
 */
export class StallSensor implements RunPart {
  private readonly tracker: StallTracker;
  private projectRoot: string | undefined;
  private space: Workspace | undefined;
  /** The iteration that ended last and is not judged yet. */
  private ended: number | undefined;
  private fd: number | undefined;
  private offset = 0;
  private partial: Buffer = Buffer.alloc(0);

  /** `scratch`: the run's LOOPX_TMPDIR once it exists (the progress file goes there). */
  constructor(
    private readonly after: number,
    private readonly scratch: () => string | undefined,
  ) {
    this.tracker = new StallTracker(after);
  }

  onEvent(event: LoopEvent): void {
    if (event.type === "run.start" || event.type === "run.resume") this.projectRoot = event.projectRoot;
    else if (event.type === "iteration.end") this.ended = event.n;
  }

  async begin(controls: RunControls): Promise<Record<string, string> | undefined> {
    if (this.projectRoot !== undefined) this.space = await findWorkspace(this.projectRoot, controls.runEnv);
    if (!this.space) controls.warn(`--stall-after: ${this.projectRoot ?? "the project"} is not in a git work tree: only progress signals (loopx progress) count as progress`);
    else this.tracker.baseline(await fingerprint(this.space), controls.progress().iterations);
    const dir = this.scratch();
    if (dir === undefined) return undefined;
    const path = join(dir, progressFileName(controls.id));
    try {
      this.fd = openSync(path, "wx+", 0o600);
    } catch (error) {
      throw new LoopxError(`cannot create the run's progress file ${path} (for --stall-after): ${(error as Error).message}`);
    }
    return { [PROGRESS_PATH_VAR]: path };
  }

  beforeScript(_next: NextScript, controls: RunControls): Promise<void> | undefined {
    const n = this.ended;
    if (n === undefined) return undefined;
    this.ended = undefined;
    return this.judge(n, controls);
  }

  private async judge(n: number, controls: RunControls): Promise<void> {
    const state = this.space ? await fingerprint(this.space) : undefined;
    const flat = this.tracker.iteration(n, state, this.signals());
    if (!flat) return;
    const message = stallMessage(this.after, flat, this.tracker.mark);
    const mark = this.tracker.mark;
    controls.emit({ type: "run.stall", after: this.after, flat: [...flat], ...(mark !== undefined ? { mark } : {}), message });
    await controls.cancel({ reason: "stalled", exitCode: STALL_EXIT_CODE, message, error: new LoopxError(message, STALL_EXIT_CODE) });
  }

  end(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** The signals appended since the last read (whole lines; anything not a signal is skipped). */
  private signals(): ProgressSignal[] {
    if (this.fd === undefined) return [];
    const buffer = Buffer.allocUnsafe(16384);
    const chunks = [this.partial];
    for (;;) {
      const bytes = readSync(this.fd, buffer, 0, buffer.length, this.offset);
      if (bytes <= 0) break;
      this.offset += bytes;
      chunks.push(Buffer.from(buffer.subarray(0, bytes)));
    }
    const data = Buffer.concat(chunks);
    const end = data.lastIndexOf(0x0a);
    this.partial = data.subarray(end + 1);
    const text = data.toString("utf8", 0, Math.max(end, 0));
    const found: ProgressSignal[] = [];
    for (const line of end < 0 ? [] : text.split("\n")) {
      try {
        const parsed = JSON.parse(line) as { value?: unknown; minStep?: unknown };
        found.push(progressSignal(parsed.value, parsed.minStep));
      } catch {
        // Not a signal loopx wrote: any process of the user's can write to the file.
      }
    }
    return found;
  }
}
