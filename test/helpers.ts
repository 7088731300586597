/**
 * Shared black-box harness: temp projects, an isolated environment, and the built CLI spawned
 * under node and under bun. Every test gets its own directories; nothing touches the real HOME.
 * The helpers live in test/helpers/, one file per concern; this file re-exports them all.
 */
export * from "./helpers/paths.js";
export * from "./helpers/runtimes.js";
export * from "./helpers/project.js";
export * from "./helpers/env.js";
export * from "./helpers/process.js";
export * from "./helpers/wait.js";
export * from "./helpers/expect.js";
export * from "./helpers/survivors.js";
export * from "./helpers/consumer.js";
export * from "./helpers/unprivileged.js";
