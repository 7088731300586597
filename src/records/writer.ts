import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { fsReason, LoopxError } from "../core/errors.js";
import type { LoopEvent } from "./events.js";
import type { RunPart } from "../core/run-session.js";
import { RECORD_PATH_VAR } from "./note.js";
import { pruneRecords } from "./store.js";
import { warnToStderr } from "../runtime/stderr.js";

/**
 * Run records and `--log` (loopx's own extension): every event of the run, one JSON object per
 * line, written with one write(2) per event on a descriptor opened once — nothing is buffered in
 * loopx, so a crash or SIGKILL loses at most the event in flight.
 */

/** Appends events to one file; after the first failure it warns once and writes nothing more. */
class EventFile {
  private fd: number | undefined;
  private failed = false;

  constructor(private readonly describe: string) {}

  open(path: string): void {
    this.fd = openSync(path, "a", 0o600);
  }

  isOpen(): boolean {
    return this.fd !== undefined;
  }

  write(event: LoopEvent): void {
    if (this.fd === undefined) return;
    try {
      writeSync(this.fd, `${JSON.stringify(event)}\n`);
    } catch (error) {
      this.fail(error);
    }
    if (event.type === "run.end") this.close();
  }

  fail(error: unknown): void {
    this.close();
    if (this.failed) return;
    this.failed = true;
    warnToStderr(`cannot write ${this.describe}: ${fsReason(error)}; the run goes on without it`);
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // Nothing left to lose.
    }
  }
}

/** The run's record `<dir>/<run id>.jsonl`; the oldest records beyond the newest 200 are pruned. */
export function recordPart(dir: string): RunPart {
  let file: EventFile | undefined;
  let path: string | undefined;
  return {
    // Scripts may add notes to the record (records/note.ts) while it is open.
    begin: () => (file?.isOpen() && path ? { [RECORD_PATH_VAR]: path } : undefined),
    onEvent(event) {
      if (event.type === "run.start") {
        path = join(dir, `${event.run}.jsonl`);
        file = new EventFile(`the run record ${path}`);
        try {
          mkdirSync(dir, { recursive: true, mode: 0o700 });
          pruneRecords(dir);
          file.open(path);
        } catch (error) {
          file.fail(error);
        }
      }
      file?.write(event);
    },
  };
}

/**
 * `--log <file>`: the same events appended to a file of the user's choosing. The user asked for
 * it by name, so a file that cannot be opened fails the run before any script runs.
 */
export function logPart(path: string): RunPart {
  const file = new EventFile(`the --log file ${path}`);
  let pending: LoopEvent | undefined;
  return {
    onEvent(event) {
      if (event.type === "run.start") pending = event;
      else file.write(event);
    },
    begin() {
      try {
        file.open(path);
      } catch (error) {
        // "no such file or directory" would not say which part of the path is missing.
        const why = (error as NodeJS.ErrnoException).code === "ENOENT" ? `the directory ${dirname(path)} does not exist` : fsReason(error);
        throw new LoopxError(`cannot open the --log file ${path}: ${why}`);
      }
      if (pending) file.write(pending);
    },
  };
}
