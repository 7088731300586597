// Types for scripts/install-size.mjs (imported by the bench and test/e2e/package/package-lean.test.ts).
export declare const INSTALL_TARGET_BYTES: number;
export declare function npm(args: string[], cwd: string): string;
export declare function packAndInstall(root: string, options?: { ignoreScripts?: boolean }): { work: string; tarball: string; prefix: string; packageDir: string };
export declare function treeBytes(dir: string, blocks?: boolean): number;
export declare function installedPackages(dir: string): Map<string, Array<{ dir: string; version: string }>>;
export interface InstallReport {
  bytes: number;
  diskBytes: number;
  packageBytes: number;
  packages: number;
  duplicates: string[];
  opentelemetry: string[];
}
export declare function installReport(prefix: string, packageDir: string): InstallReport;
