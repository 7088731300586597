/**
 * Per Node version (the machine's, then Node 22, 24, 26 pinned in test/node-versions): what a bash
 * script's per-iteration `$LOOPX_BIN output --stop` costs against `node -e 0` on the same Node.
 * (TS and JS scripts per Node version, with and without `import "loopx"`, are in scripts.ts.)
 */
import { ensureNodeVersions, nodeVersions } from "../../node-versions.mjs";
import { median, runOk } from "../harness.js";
import { fmt, table } from "../report.js";
import { DIST_BIN, NODE, STARTUP_RUNS } from "../setup.js";

export interface NodeVersionResult {
  version: string;
  outputMs: number;
  emptyMs: number;
}

export async function measureNodeVersions(): Promise<NodeVersionResult[]> {
  ensureNodeVersions();
  const nodes: string[] = [NODE, ...(nodeVersions() as { exe: string }[]).map((v) => v.exe)];
  const results: NodeVersionResult[] = [];
  for (const exe of nodes) {
    const version = (await runOk([exe, "--version"])).stdout.trim();
    process.stderr.write(`  ${version}\n`);
    const output: number[] = [];
    const empty: number[] = [];
    for (let i = 0; i < STARTUP_RUNS; i++) {
      output.push((await runOk([exe, DIST_BIN, "output", "--stop"])).ms);
      empty.push((await runOk([exe, "-e", "0"])).ms);
    }
    results.push({ version, outputMs: median(output), emptyMs: median(empty) });
  }
  return results;
}

export function printNodeVersions(rows: NodeVersionResult[]): void {
  console.log("\n== Per Node version: loopx output --stop vs `node -e 0` (medians, wall ms) ==");
  const major = (version: string) => Number(version.slice(1).split(".")[0]);
  console.log(
    table(
      ["node", "", "output", "node -e 0", "ratio", "met"],
      rows.map((r) => {
        const ratio = r.outputMs / r.emptyMs;
        return [r.version, "", fmt(r.outputMs, 1), fmt(r.emptyMs, 1), fmt(ratio, 3), major(r.version) >= 22 ? (ratio <= 1.3 ? "yes" : "NO") : "(n/a)"];
      }),
    ),
  );
  console.log("target: output <= 1.3 x node -e 0 on Node 22+.");
}
