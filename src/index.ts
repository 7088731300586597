/** The public API of loopx (spec §9): run loops from programs, and output/input inside scripts (script.ts). */
export { run, runPromise, type RunOptions } from "./api/run.js";
export * from "./script.js";
