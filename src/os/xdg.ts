/**
 * loopx's directories under the XDG Base Directory specification: `$XDG_CONFIG_HOME/loopx`
 * (global env file), `$XDG_CACHE_HOME/loopx` (transform cache, the binary's helpers, Node's
 * compile cache), `$XDG_STATE_HOME/loopx` (run records). A variable that is unset, empty or
 * relative is ignored, as that specification says ("If an implementation encounters a relative path
 * in any of these variables it should consider the path invalid and ignore it"), and the default
 * under $HOME applies. Tiny on purpose: bin.js bundles it.
 */
import { join } from "node:path";
import { os } from "./builtins.js";

export type XdgKind = "config" | "cache" | "state";

const VARIABLES: Record<XdgKind, string> = { config: "XDG_CONFIG_HOME", cache: "XDG_CACHE_HOME", state: "XDG_STATE_HOME" };
const DEFAULTS: Record<XdgKind, string> = { config: ".config", cache: ".cache", state: join(".local", "state") };

/** `$XDG_<KIND>_HOME/loopx`, or its default `~/.config/loopx`, `~/.cache/loopx`, `~/.local/state/loopx`. */
export function loopxDir(kind: XdgKind, env: Record<string, string | undefined> = process.env): string {
  const value = env[VARIABLES[kind]];
  const base = value?.startsWith("/") ? value : join(env.HOME || os().homedir(), DEFAULTS[kind]);
  return join(base, "loopx");
}
