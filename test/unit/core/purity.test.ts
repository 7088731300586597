/**
 * src/core/ is pure logic: no file system, no processes, no OS, no process object, no
 * Node-only globals. Whatever it needs from outside comes through an interface (the loop's host,
 * the session's options). What core may import is a dependency-cruiser rule (.dependency-cruiser.cjs,
 * `npm run lint`); shown here to catch planted violations. The host's globals, which no import
 * brings in, are a scan of the sources, comments left out.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../../helpers.js";
import { violations } from "./globals-scan.js";

const CORE = join(ROOT, "src", "core");

/** The rules of .dependency-cruiser.cjs broken by `files` (paths under a scratch project's src/). */
function ruleViolations(files: Record<string, string>): string[] {
  const dir = mkdtempSync(join(tmpdir(), "loopx-depcruise-"));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const depcruise = join(ROOT, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs");
  const out = execFileSync(process.execPath, [depcruise, "src", "--config", join(ROOT, ".dependency-cruiser.cjs"), "--output-type", "json"], { cwd: dir, encoding: "utf8" });
  const { summary } = JSON.parse(out) as { summary: { violations: Array<{ from: string; to: string; rule: { name: string } }> } };
  return summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
}
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("src/core is pure", () => {
  it("no file of src/core names a forbidden global", () => {
    const files = readdirSync(CORE, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(5);
    expect(violations(Object.fromEntries(files.map((f) => [f, readFileSync(join(CORE, f), "utf8")])))).toEqual([]);
  });

  it.each([
    ["const pid = process.pid;", "process"],
    ["const { env } = process;", "process"],
    ["crypto.getRandomValues(bytes);", "the crypto global"],
    ['Buffer.byteLength(text, "utf8");', "Buffer"],
    ["Bun.spawn(['ls']);", "Bun"],
  ])("the scan catches %s", (line, name) => {
    expect(violations({ "x.ts": `// a comment about process.env is fine\nconst s = "a process";\n${line}\n` })).toEqual([`x.ts: ${name}`]);
    expect(violations({ "x.ts": `/* ${line} */\n// ${line}\nexport const ok = 1;\n` })).toEqual([]);
  });
});

describe("the dependency rules (.dependency-cruiser.cjs) catch planted violations", () => {
  it("core imports no I/O module (node:fs, child_process, crypto, os, net/http/tty) and nothing above it", { timeout: 60_000 }, () => {
    const found = ruleViolations({
      "src/core/a.ts": 'import { readFileSync } from "node:fs";\nimport { spawn } from "child_process";\nimport { randomBytes } from "node:crypto";\nexport const a = [readFileSync, spawn, randomBytes];\n',
      "src/core/b.ts": 'import { homedir } from "node:os";\nimport { connect } from "node:net";\nimport { isatty } from "node:tty";\nimport { join } from "node:path";\nexport const b = [homedir, connect, isatty, join];\n',
      "src/core/c.ts": 'import type { E } from "../engine/e.js";\nexport type C = E;\nexport const c = () => import("../os/o.js");\n',
      "src/os/o.ts": "export const o = 1;\n",
      "src/records/wording.ts": 'import { readFileSync } from "node:fs";\nexport const r = readFileSync;\n',
      "src/engine/e.ts": "export type E = number;\n",
    });
    expect(found).toEqual([
      "core-imports-only-core: src/core/c.ts → src/engine/e.ts",
      "core-imports-only-core: src/core/c.ts → src/os/o.ts",
      "core-is-pure: src/core/a.ts → child_process",
      "core-is-pure: src/core/a.ts → crypto",
      "core-is-pure: src/core/a.ts → fs",
      "core-is-pure: src/core/b.ts → net",
      "core-is-pure: src/core/b.ts → os",
      "core-is-pure: src/core/b.ts → tty",
      "records-reading-is-pure: src/records/wording.ts → fs",
    ]);
  });

  it("layers import downward only and features do not import each other (but for the declared pairs)", { timeout: 60_000 }, () => {
    const found = ruleViolations({
      "src/os/o.ts": 'import { r } from "../runtime/r.js";\nexport const o = r;\n',
      "src/runtime/r.ts": 'import { w } from "../records/w.js";\nexport const r = w;\n',
      "src/records/w.ts": 'import { s } from "../engine/s.js";\nexport const w = s;\n',
      "src/records/x.ts": 'import { p } from "../parts/p.js";\nexport const x = p;\n',
      "src/parts/p.ts": 'import { w } from "../records/w.js";\nexport const p = w;\n',
      "src/control/c.ts": 'import { p } from "../parts/p.js";\nimport { w } from "../records/w.js";\nexport const c = [p, w];\n',
      "src/engine/s.ts": 'import { m } from "../cli/m.js";\nimport { c } from "../control/c.js";\nexport const s = [m, c];\n',
      "src/cli/m.ts": 'import { s } from "../engine/s.js";\nimport { missing } from "./gone.js";\nexport const m = [s, missing];\n',
      // The writer's full-disk steps are records/'s own: the guardian closes a record through records/close.ts.
      "src/records/room.ts": "export const room = 1;\n",
      "src/guardian/g.ts": 'import { room } from "../records/room.js";\nexport const g = room;\n',
    });
    expect(found).toEqual([
      "engine-imports-below-drivers: src/engine/s.ts → src/cli/m.ts",
      "feature-control-isolated: src/control/c.ts → src/parts/p.ts",

      // The planted upward imports close circles too (s → m → s; c → p → w → s → c).
      "no-circular: src/cli/m.ts → src/engine/s.ts",
      "no-circular: src/control/c.ts → src/parts/p.ts",
      "no-circular: src/control/c.ts → src/records/w.ts",
      "not-to-unresolvable: src/cli/m.ts → ./gone.js",
      "os-imports-core-only: src/os/o.ts → src/runtime/r.ts",
      "records-full-disk-is-private: src/guardian/g.ts → src/records/room.ts",
      "records-imports-core-and-os: src/records/w.ts → src/engine/s.ts",
      "records-imports-core-and-os: src/records/x.ts → src/parts/p.ts",
      "runtime-imports-below: src/runtime/r.ts → src/records/w.ts",
    ]);
  });

  it("no import circle, even through a dynamic import (the old cli catalog ↔ commands ↔ completion circle)", { timeout: 60_000 }, () => {
    const found = ruleViolations({
      "src/cli/catalog.ts": 'import { GROUPS } from "./commands/index.js";\nexport const catalog = () => GROUPS;\n',
      "src/cli/commands/index.ts": 'export const GROUPS = { completion: () => import("./completion.js") };\n',
      "src/cli/commands/completion.ts": 'export const script = async () => (await import("../completion.js")).complete;\n',
      "src/cli/completion.ts": 'import { catalog } from "./catalog.js";\nexport const complete = catalog;\n',
      "src/cli/plain.ts": 'import { catalog } from "./catalog.js";\nexport const plain = catalog;\n',
    });
    // One violation per circle (the first edge of it); plain.ts, outside the circle, is fine.
    expect(found).toEqual(["no-circular: src/cli/catalog.ts → src/cli/commands/index.ts"]);
  });
});
