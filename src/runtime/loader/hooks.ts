/**
 * loopx's module hooks for Node versions without module.registerHooks (20.6 to 22.14, 23.0 to
 * 23.4), registered with module.register and run in Node's hooks thread. The same decisions as the
 * in-thread sync-hooks.ts (see resolution.ts), with Node's asynchronous next hooks.
 */
import { loadTransformed, notFoundAttempt, resolutionSteps, type LoadResult, type ResolveResult } from "./resolution.js";

type NextResolve = (specifier: string, context?: unknown) => Promise<ResolveResult>;
type NextLoad = (url: string, context?: unknown) => Promise<LoadResult>;

export async function resolve(specifier: string, context: unknown, nextResolve: NextResolve): Promise<ResolveResult> {
  const steps = resolutionSteps(specifier);
  let step = steps.next();
  while (!step.done) step = steps.next(await nextResolve(step.value, context).catch(notFoundAttempt));
  return step.value;
}

export async function load(url: string, context: unknown, nextLoad: NextLoad): Promise<LoadResult> {
  return loadTransformed(url) ?? nextLoad(url, context);
}
