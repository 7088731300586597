/**
 * The npm install stays lean: `npm pack`, then `npm install -g --ignore-scripts` into a fresh
 * prefix — as npm 11 installs it without allowing esbuild's postinstall — is at most 20 MB
 * (scripts/install-size.mjs; the bench prints the same figure), holds no package twice, and no
 * @opentelemetry package: the SDK and its exporters are one module of dist/ (telemetry/sdk.js),
 * loaded only by a run with telemetry on. From that installed copy, under node and bun: a TS
 * script runs (esbuild works without its postinstall), a run with telemetry off loads nothing of
 * the SDK, and one with it on exports its spans to a collector.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INSTALL_TARGET_BYTES, installReport, packAndInstall } from "../../../scripts/install-size.mjs";
import { startReceiver, type Receiver } from "../../fixtures/otlp/receiver.js";
import { BUN, NODE, ROOT, isolatedEnv, makeProject, runCommand, tempDir } from "../../helpers.js";

let installed: ReturnType<typeof packAndInstall>;
let receiver: Receiver;

beforeAll(async () => {
  installed = packAndInstall(ROOT, { ignoreScripts: true });
  receiver = await startReceiver();
}, 300_000);

afterAll(async () => {
  await receiver?.close();
  if (installed) rmSync(installed.work, { recursive: true, force: true });
});

const PROJECT = {
  ".loopx/w/index.ts": 'import { output } from "loopx";\nconst n: number = Number(process.env.LOOPX_ITERATION);\noutput({ result: `ts ${n}`, goto: "check" });\n',
  ".loopx/w/check.sh": '#!/bin/bash\ncat > "$LOOPX_PROJECT_ROOT/got.txt"\n"$LOOPX_BIN" output --stop\n',
};

describe("the npm install", () => {
  it(`is at most ${INSTALL_TARGET_BYTES / 1e6} MB, with no package twice and no @opentelemetry package`, () => {
    const report = installReport(installed.prefix, installed.packageDir);
    expect(report.packages).toBeGreaterThan(3); // the walk saw the dependencies: an empty tree cannot pass
    expect(report.duplicates).toEqual([]);
    expect(report.opentelemetry).toEqual([]);
    expect(report.bytes).toBeLessThanOrEqual(INSTALL_TARGET_BYTES);
  });

  it.each([
    ["node", NODE],
    ["bun", BUN],
  ])("runs a TS workflow under %s without esbuild's postinstall", async (_name, exe) => {
    const cwd = makeProject(PROJECT);
    const result = await runCommand(exe, [join(installed.packageDir, "dist", "bin.js"), "run", "w"], { cwd, env: isolatedEnv() });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "got.txt"), "utf8")).toBe("ts 1");
  });
});

describe.each([
  ["node", NODE],
  ["bun", BUN],
])("telemetry from the installed package (%s)", (name, exe) => {
  it("off: the SDK is not loaded; on: the run's spans reach the collector", async () => {
    const bin = join(installed.packageDir, "dist", "bin.js");
    const cwd = makeProject({ ".loopx/w/index.sh": '#!/bin/bash\n"$LOOPX_BIN" output --stop\n' });
    const log = join(tempDir("loopx-lean-modules-"), "loaded.txt");
    // What the run loaded, from inside it: the ES modules' URLs (Node's hooks) or require.cache (Bun).
    const recorder = join(tempDir("loopx-lean-recorder-"), name === "node" ? "record.mjs" : "record.js");
    writeFileSync(
      recorder,
      name === "node"
        ? `import { register } from "node:module";\nimport { appendFileSync } from "node:fs";\nregister("data:text/javascript,${encodeURIComponent(`import { appendFileSync } from "node:fs";\nexport async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, url + "\\n"); return next(url, context); }`)}");\n`
        : `process.on("exit", () => require("node:fs").appendFileSync(${JSON.stringify(log)}, Object.keys(require.cache).join("\\n") + "\\n"));\n`,
    );
    const preload = name === "node" ? ["--import", pathToFileURL(recorder).href] : ["--preload", recorder];
    const sdk = (text: string) => text.split("\n").filter((line) => line.endsWith("/dist/telemetry/sdk.js"));

    writeFileSync(log, "");
    const off = await runCommand(exe, [...preload, bin, "run", "w"], { cwd, env: isolatedEnv() });
    expect(off.code, off.stderr).toBe(0);
    const offModules = readFileSync(log, "utf8");
    expect(offModules).toContain("/dist/bin.js");
    expect(sdk(offModules)).toEqual([]);

    writeFileSync(log, "");
    const on = await runCommand(exe, [...preload, bin, "run", "w"], { cwd, env: isolatedEnv({ LOOPX_OTEL: "1", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRIC_EXPORT_INTERVAL: "600000" }) });
    expect(on.code, on.stderr).toBe(0);
    expect(sdk(readFileSync(log, "utf8")).length).toBe(1);
    const runSpans = receiver.spans.filter((span) => span.name === "loopx run" && span.resource["service.name"] === "loopx");
    expect(runSpans.length).toBeGreaterThan(0);
    expect(receiver.spans.some((span) => span.name === "loopx iteration w:index")).toBe(true);
  }, 120_000);
});
