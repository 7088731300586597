/**
 * Preloaded with `node --import` into every JS/TS script loopx runs under Node (spec §3.3, §6.3).
 * Registers one hooks module, which chains loopx's resolve/load hooks in front of tsx's ESM hooks.
 * tsx is loaded only in the hooks thread: importing it here as well would cost the script's own
 * thread tens of milliseconds per iteration for nothing.
 */
import { register } from "node:module";

process.setSourceMapsEnabled(true); // what tsx's own register() does: stack traces point into .ts
register("./hooks.js", { parentURL: import.meta.url, data: {} });
