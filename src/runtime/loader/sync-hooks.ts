/**
 * loopx's module hooks for Node versions with module.registerHooks (≥ 22.15 / 23.5): they run in
 * the script's own thread, synchronously — no hooks worker, no deprecation warning. See
 * resolution.ts for what they decide.
 */
import { OWN_ENTRY, alternatives, isLoopx, loadTransformed, notFound, withFormat, type LoadResult, type ResolveResult } from "./resolution.js";

type NextResolve = (specifier: string, context?: unknown) => ResolveResult;
type NextLoad = (url: string, context?: unknown) => LoadResult;

export function resolve(specifier: string, context: unknown, nextResolve: NextResolve): ResolveResult {
  try {
    return withFormat(nextResolve(specifier, context));
  } catch (error) {
    if (!notFound(error)) throw error;
    if (specifier === "loopx") return { url: OWN_ENTRY, format: "module", shortCircuit: true };
    if (isLoopx(specifier)) throw error;
    for (const candidate of alternatives(specifier)) {
      try {
        return withFormat(nextResolve(candidate, context));
      } catch (again) {
        if (!notFound(again)) throw again;
      }
    }
    throw error;
  }
}

export function load(url: string, context: unknown, nextLoad: NextLoad): LoadResult {
  return loadTransformed(url) ?? nextLoad(url, context);
}
