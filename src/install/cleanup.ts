import type { ChildProcess } from "node:child_process";
import { rmSync, rmdirSync } from "node:fs";
import { constants } from "node:os";

/**
 * Everything an install has created and must remove on any failure, including SIGINT/SIGTERM/
 * SIGHUP while it waits on the network: temp directories, the staging directory, a `.loopx/` it
 * created, and child processes (git runs in its own process group, so it is killed explicitly).
 */
export class Cleanup {
  private readonly paths: string[] = [];
  private readonly emptyDirs: string[] = [];
  private readonly children = new Set<ChildProcess>();
  private interrupting = false;
  private readonly onSignal = (signal: NodeJS.Signals) => this.onInterrupt(signal);
  private static readonly SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

  constructor() {
    for (const signal of Cleanup.SIGNALS) process.on(signal, this.onSignal);
  }

  /** True once a signal has arrived: the handler owns the exit from then on. */
  get interrupted(): boolean {
    return this.interrupting;
  }

  /** Removes `path` (recursively) on cleanup. */
  addPath(path: string): void {
    this.paths.push(path);
  }

  /** Removes directory `path` on cleanup only if it is then empty (a `.loopx/` this install created). */
  addEmptyDir(path: string): void {
    this.emptyDirs.push(path);
  }

  /** A child started with `detached: true` (its own process group), killed with its group on cleanup. */
  addChild(child: ChildProcess): void {
    this.children.add(child);
  }

  removeChild(child: ChildProcess): void {
    this.children.delete(child);
  }

  private killChildren(): void {
    for (const child of this.children) {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }

  /** Kills children and removes everything registered, newest first. Never throws. */
  run(): void {
    this.killChildren();
    this.children.clear();
    for (const path of this.paths.splice(0).reverse()) {
      try {
        rmSync(path, { recursive: true, force: true, maxRetries: 3 });
      } catch {
        // best effort: nothing else can be done
      }
    }
    for (const dir of this.emptyDirs.splice(0).reverse()) {
      try {
        rmdirSync(dir);
      } catch {
        // not empty (something else was written there) or already gone: leave it
      }
    }
  }

  /** Stops listening for signals; call once the install has finished, whatever the outcome. */
  dispose(): void {
    for (const signal of Cleanup.SIGNALS) process.off(signal, this.onSignal);
  }

  /** On a signal: kill children and wait (briefly) until they are gone, so they write nothing after the removal. */
  private onInterrupt(signal: NodeJS.Signals): void {
    if (this.interrupting) return;
    this.interrupting = true;
    this.killChildren();
    const exited = [...this.children].map(
      (child) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("close", () => resolve()))),
    );
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 2000));
    void Promise.race([Promise.all(exited), timeout]).then(() => {
      this.run();
      process.stderr.write(`loopx: install interrupted by ${signal}; nothing was installed\n`);
      process.exit(128 + (constants.signals[signal] ?? 0));
    });
  }
}
