/**
 * Module resolve hook for scripts run under Node (spec §3.3, §6.3):
 * - `import ... from "loopx"` resolves through ordinary resolution first, so a workflow's own
 *   `node_modules/loopx` wins; only when that fails does it map to the running CLI's package.
 * - Script files outside node_modules are always ESM: loopx scripts must use `import`, and
 *   `require`/`module.exports` must fail even without a `"type": "module"` package.json.
 */
const ownEntry = new URL("../../index.js", import.meta.url).href;
const SCRIPT_FILE = /\.(?:js|jsx|ts|tsx)$/;

interface ResolveResult {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}
type NextResolve = (specifier: string, context: unknown) => Promise<ResolveResult>;

export async function resolve(specifier: string, context: unknown, nextResolve: NextResolve): Promise<ResolveResult> {
  if (specifier === "loopx" || specifier.startsWith("loopx/")) {
    try {
      return await nextResolve(specifier, context);
    } catch (error) {
      if (specifier === "loopx" && (error as { code?: string }).code === "ERR_MODULE_NOT_FOUND") {
        return { url: ownEntry, format: "module", shortCircuit: true };
      }
      throw error;
    }
  }
  const resolved = await nextResolve(specifier, context);
  if (resolved.url.startsWith("file:") && SCRIPT_FILE.test(resolved.url) && !resolved.url.includes("/node_modules/")) {
    return { ...resolved, format: "module" };
  }
  return resolved;
}
