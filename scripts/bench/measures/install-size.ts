/**
 * `npm install -g` of the packed package into a fresh prefix (scripts/install-size.mjs): its size
 * against the target (20 MB), this build and the --before build, beside the floor — the package's
 * own dist/ — with the packages it holds, any held twice, and the @opentelemetry ones. Installed
 * with --ignore-scripts, as npm 11 installs it without allowing esbuild's postinstall.
 */
import { rmSync } from "node:fs";
import { INSTALL_TARGET_BYTES, installReport, packAndInstall, type InstallReport } from "../../install-size.mjs";
import { beforeRoot } from "../before.js";
import { fmt, table } from "../report.js";
import { ROOT } from "../setup.js";

export interface InstallSizeResult extends InstallReport {
  build: "now" | "before";
  met: boolean;
}

export function measureInstallSize(): InstallSizeResult[] {
  const builds: Array<["now" | "before", string]> = [["now", ROOT]];
  const before = beforeRoot();
  if (before !== undefined) builds.push(["before", before]);
  return builds.map(([build, root]) => {
    const installed = packAndInstall(root, { ignoreScripts: true });
    try {
      const report = installReport(installed.prefix, installed.packageDir);
      return { build, ...report, met: report.bytes <= INSTALL_TARGET_BYTES && report.duplicates.length === 0 };
    } finally {
      rmSync(installed.work, { recursive: true, force: true });
    }
  });
}

export function printInstallSize(results: InstallSizeResult[]): void {
  const mb = (bytes: number) => `${fmt(bytes / 1e6, 1)} MB`;
  console.log(`\nnpm install -g of the packed package into a fresh prefix: target <= ${mb(INSTALL_TARGET_BYTES)}, no package twice; floor: the package's own dist/`);
  console.log(
    table(
      ["build", "installed", "on disk (du)", "floor (dist/)", "packages", "held twice", "@opentelemetry", "met"],
      results.map((r) => {
        const twice = r.duplicates.length === 0 ? "none" : `${r.duplicates.length}: ${r.duplicates.slice(0, 2).map((d) => d.split(" ")[0]).join(", ")}${r.duplicates.length > 2 ? ", …" : ""}`;
        return [r.build, mb(r.bytes), mb(r.diskBytes), mb(r.packageBytes), String(r.packages), twice, String(r.opentelemetry.length), r.met ? "yes" : "NO"];
      }),
    ),
  );
}
