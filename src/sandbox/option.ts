import { describeValue } from "../core/describe.js";
import { LoopxError } from "../core/errors.js";

/** RunOptions.sandbox / --sandbox[=on|off] / LOOPX_SANDBOX: "on", "off", or undefined (not given). */
export function checkSandboxMode(value: unknown): "on" | "off" | undefined {
  if (value === undefined) return undefined;
  if (value === true || value === "on" || value === "1" || value === "true") return "on";
  if (value === false || value === "off" || value === "0" || value === "false" || value === "") return "off";
  throw new LoopxError(`sandbox must be on or off (true or false), got ${describeValue(value)}`);
}

/** RunOptions.sandboxAllow / --sandbox-allow: host:port entries and paths (checked again when the policy is read). */
export function checkSandboxRules(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((rule) => typeof rule !== "string" || rule === "" || rule.includes("\0"))) {
    throw new LoopxError(`sandboxAllow must be a list of host:port entries and paths, got ${describeValue(value)}`);
  }
  return value.length > 0 ? (value as string[]) : undefined;
}
