/**
 * loopx's module hooks for Node versions without module.registerHooks (20.6 to 22.14, 23.0 to
 * 23.4), registered with module.register and run in Node's hooks thread. The same decisions as the
 * in-thread sync-hooks.ts (see resolution.ts), with Node's asynchronous next hooks.
 */
import { OWN_ENTRY, alternatives, isLoopx, loadTransformed, notFound, withFormat, type LoadResult, type ResolveResult } from "./resolution.js";

type NextResolve = (specifier: string, context?: unknown) => Promise<ResolveResult>;
type NextLoad = (url: string, context?: unknown) => Promise<LoadResult>;

export async function resolve(specifier: string, context: unknown, nextResolve: NextResolve): Promise<ResolveResult> {
  try {
    return withFormat(await nextResolve(specifier, context));
  } catch (error) {
    if (!notFound(error)) throw error;
    if (specifier === "loopx") return { url: OWN_ENTRY, format: "module", shortCircuit: true };
    if (isLoopx(specifier)) throw error;
    for (const candidate of alternatives(specifier)) {
      try {
        return withFormat(await nextResolve(candidate, context));
      } catch (again) {
        if (!notFound(again)) throw again;
      }
    }
    throw error;
  }
}

export async function load(url: string, context: unknown, nextLoad: NextLoad): Promise<LoadResult> {
  return loadTransformed(url) ?? nextLoad(url, context);
}
