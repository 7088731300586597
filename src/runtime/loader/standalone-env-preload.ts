/**
 * Preloaded (`--preload`) into every JS/TS script a standalone loopx binary runs, alone or as part
 * of bun-preload.ts. The binary starts scripts as itself with BUN_BE_BUN=1 (so that it acts as
 * Bun); the script's own children (say `$LOOPX_BIN output ...`) must see the binary as loopx
 * again. This one statement is all a script that cannot use CommonJS needs: bun-preload.ts's
 * plugin costs ~1-2 ms more per script start, for nothing to catch.
 */
delete process.env.BUN_BE_BUN;
export {};
