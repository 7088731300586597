import { isAbsolute, resolve } from "node:path";
import { LoopxError } from "../core/errors.js";
import type { LoopRequest } from "../core/loop.js";
import type { Output } from "../core/output.js";
import { loopxBin } from "../runtime/detect.js";
import { ScriptSupervisor } from "../runtime/supervisor.js";

export type { Output } from "../core/output.js";

export interface RunOptions {
  /** Maximum number of script executions, goto hops included; 0 validates and runs nothing. */
  maxIterations?: number;
  /** A `.env` file merged over the global env file; relative paths resolve against `cwd`. */
  envFile?: string;
  /** Aborting terminates the running script's process group and makes the loop throw. */
  signal?: AbortSignal;
  /** The project root (where `.loopx/` is); defaults to process.cwd() at call time. */
  cwd?: string;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The loop was aborted", "AbortError");
}

/**
 * Runs a loop and yields each iteration's Output (spec §9.1). Never throws synchronously: every
 * error surfaces from the first `next()`. Options, cwd and the environment are snapshotted now.
 */
export function run(target: string, options?: RunOptions): AsyncGenerator<Output, void, undefined> {
  let request: LoopRequest | undefined;
  let signal: AbortSignal | undefined;
  let setupError: unknown;
  try {
    const cwd = options?.cwd ?? process.cwd();
    const envFile = options?.envFile;
    signal = options?.signal;
    request = {
      target,
      maxIterations: options?.maxIterations,
      envFile: envFile === undefined ? undefined : isAbsolute(envFile) ? envFile : resolve(cwd, envFile),
      projectRoot: resolve(cwd),
      baseEnv: { ...process.env },
      loopxBin: loopxBin(),
    };
  } catch (error) {
    setupError = error instanceof Error ? error : new LoopxError(String(error));
  }
  return new LoopGenerator(request, signal, setupError);
}

/** Runs a loop to its end and resolves with every Output (spec §9.2); rejects on any error. */
export async function runPromise(target: string, options?: RunOptions): Promise<Output[]> {
  const outputs: Output[] = [];
  for await (const output of run(target, options)) outputs.push(output);
  return outputs;
}

/**
 * An AsyncGenerator over the engine that can cancel a script that is running *now*: `return()`
 * and abort terminate the active process group (SIGTERM, grace, SIGKILL) even while a `next()` is
 * pending, which a plain `async function*` cannot do.
 */
/**
 * The engine, loaded when iteration begins: scripts import this module (for output/input) on every
 * iteration, and must not pay for discovery, env files, semver and the script runner.
 */
async function* lazyLoop(request: LoopRequest, supervisor: ScriptSupervisor): AsyncGenerator<Output, void, undefined> {
  const [{ runLoop }, { createLoopHost }] = await Promise.all([import("../core/loop.js"), import("./loop-host.js")]);
  yield* runLoop(request, createLoopHost(supervisor));
}

class LoopGenerator implements AsyncGenerator<Output, void, undefined> {
  private readonly supervisor = new ScriptSupervisor();
  private readonly inner: AsyncGenerator<Output, void, undefined> | undefined;
  private returned = false;
  private aborted = false;
  private readonly onAbort = () => {
    this.aborted = true;
    void this.supervisor.terminate("SIGTERM");
  };

  constructor(
    request: LoopRequest | undefined,
    private readonly signal: AbortSignal | undefined,
    private setupError: unknown,
  ) {
    if (request) this.inner = lazyLoop(request, this.supervisor);
    if (signal?.aborted) this.aborted = true;
    else signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** `await using loop = run(...)` stops the loop like `return()` (Node ≥ 20.4 and Bun define the symbol). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }

  private finish(): void {
    this.signal?.removeEventListener("abort", this.onAbort);
  }

  async next(): Promise<IteratorResult<Output, void>> {
    if (this.returned) return { done: true, value: undefined };
    if (this.aborted) return this.fail(await this.abortedError());
    if (this.setupError !== undefined || !this.inner) {
      const error = this.setupError;
      this.setupError = undefined;
      return this.fail(error);
    }
    try {
      const result = await this.inner.next();
      if (this.aborted) return this.fail(await this.abortedError());
      if (this.returned) return { done: true, value: undefined };
      if (result.done) this.finish();
      return result;
    } catch (error) {
      if (this.aborted) return this.fail(await this.abortedError());
      if (this.returned) {
        await this.supervisor.terminate("SIGTERM");
        return { done: true, value: undefined };
      }
      return this.fail(error);
    }
  }

  /** Waits until the aborted loop's process group is gone, then gives the abort error. */
  private async abortedError(): Promise<unknown> {
    await this.supervisor.terminate("SIGTERM");
    return abortError(this.signal!);
  }

  private fail(error: unknown): never {
    this.returned = true;
    this.finish();
    void this.inner?.return();
    throw error;
  }

  async return(): Promise<IteratorResult<Output, void>> {
    if (!this.returned) {
      this.returned = true;
      this.finish();
      await this.supervisor.terminate("SIGTERM");
      await this.inner?.return().catch(() => undefined);
    }
    return { done: true, value: undefined };
  }

  async throw(error: unknown): Promise<IteratorResult<Output, void>> {
    await this.return();
    throw error;
  }
}
