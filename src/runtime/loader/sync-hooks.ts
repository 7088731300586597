/**
 * loopx's module hooks for Node versions with module.registerHooks (≥ 22.15 / 23.5): they run in
 * the script's own thread, synchronously — no hooks worker, no deprecation warning. See
 * resolution.ts for what they decide.
 */
import { attempt, loadTransformed, resolutionSteps, type LoadResult, type ResolveResult } from "./resolution.js";

type NextResolve = (specifier: string, context?: unknown) => ResolveResult;
type NextLoad = (url: string, context?: unknown) => LoadResult;

export function resolve(specifier: string, context: unknown, nextResolve: NextResolve): ResolveResult {
  const steps = resolutionSteps(specifier);
  let step = steps.next();
  while (!step.done) {
    const candidate = step.value;
    step = steps.next(attempt(() => nextResolve(candidate, context)));
  }
  return step.value;
}

export function load(url: string, context: unknown, nextLoad: NextLoad): LoadResult {
  return loadTransformed(url) ?? nextLoad(url, context);
}
