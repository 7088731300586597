import { resolve } from "node:path";
import { describeValue } from "../core/describe.js";
import { LoopxError } from "../core/errors.js";

/** The checks of the run options that are plain values (engine/options.ts RUN_OPTIONS uses them). */

/** What a value is, for a message: "an array", "a Map", "number 3". */
export function shapeOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" || typeof value === "function") {
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof value === "function" ? "a function" : typeof name === "string" && name !== "" && name !== "Object" ? `a ${name}` : "an object";
  }
  return `${typeof value} ${describeValue(value)}`;
}

/**
 * RunOptions.env: undefined, or a plain object whose every value is a string; names may hold
 * neither "=" nor NUL (nor be empty), values no NUL — what an environment can carry.
 */
export function validateRunEnv(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  const proto = value !== null && typeof value === "object" ? Object.getPrototypeOf(value) : undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value) || (proto !== Object.prototype && proto !== null)) {
    throw new LoopxError(`env must be an object of variable names to string values, got ${shapeOf(value)}`);
  }
  const env: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === "" || key.includes("=") || key.includes("\0")) {
      throw new LoopxError(`env has an invalid variable name ${JSON.stringify(key)}: names are non-empty and hold no "=" or NUL`);
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `env.${key}` : `env[${JSON.stringify(key)}]`;
    if (typeof item !== "string") throw new LoopxError(`${name} must be a string, got ${shapeOf(item)}`);
    if (item.includes("\0")) throw new LoopxError(`${name} must not contain a NUL character`);
    env[key] = item;
  }
  return env;
}

/** A file path option: absolute, relative ones resolved against the project root (the API's `cwd`, the CLI's working directory). */
export function checkPath(name: string) {
  return (value: unknown, projectRoot: string): string | undefined => {
    if (value === undefined) return undefined;
    if (typeof value !== "string") throw new LoopxError(`${name} must be a file path, got ${shapeOf(value)}`);
    return resolve(projectRoot, value);
  };
}

export function checkFunction<F>(name: string) {
  return (value: unknown): F | undefined => {
    if (value !== undefined && typeof value !== "function") throw new LoopxError(`${name} must be a function, got ${typeof value}`);
    return value as F | undefined;
  };
}

/** RunOptions.signal: an AbortSignal (anything with `aborted` and `addEventListener`). */
export function checkAbortSignal(value: unknown): AbortSignal | undefined {
  if (value === undefined) return undefined;
  const signal = value as Partial<AbortSignal> | null;
  if (typeof signal !== "object" || signal === null || typeof signal.addEventListener !== "function" || typeof signal.aborted !== "boolean") {
    throw new LoopxError(`signal must be an AbortSignal, got ${shapeOf(value)}`);
  }
  return value as AbortSignal;
}
