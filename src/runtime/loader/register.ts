/**
 * Preloaded with `node --import` into every JS/TS script loopx runs under Node (spec §3.3, §6.3).
 * Registers tsx's ESM hooks (TypeScript/JSX) and then loopx's own resolve hook, which runs first.
 */
import { register } from "node:module";
import { register as registerTsx } from "tsx/esm/api";

registerTsx();
register("./hooks.js", import.meta.url);
