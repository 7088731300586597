import type { LoopEvent } from "./events.js";
import type { RunPart } from "./run-part.js";

/**
 * Hands each event of a run to its parts' `onEvent` (see RunSession). A part that throws does not
 * stop the others: it is warned about once.
 */
export class PartEvents {
  private readonly failed = new Set<RunPart>();

  constructor(
    private readonly parts: readonly RunPart[],
    private readonly warn: (message: string) => void,
  ) {}

  deliver(event: LoopEvent): void {
    for (const part of this.parts) {
      if (!part.onEvent) continue;
      try {
        part.onEvent(event);
      } catch (error) {
        if (!this.failed.has(part)) {
          this.failed.add(part);
          this.warn(`an event observer failed and will not be warned about again: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
  }
}
