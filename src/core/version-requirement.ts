/**
 * A workflow's declared loopx version requirement (spec §3.2 "Workflow-level version
 * declaration" and "Workflow package.json failure modes"), shared by the runtime check (a
 * mismatch warns) and `loopx install` (a mismatch blocks unless -y, spec §10.6).
 *
 * - `none`: no package.json, or no `loopx` in `dependencies`/`devDependencies`: nothing to check.
 * - `warning`: package.json is unreadable, is not valid JSON, or declares something that is not a
 *   semver range; the caller prints the one-line `message` as a warning and skips the check.
 * - `range`: a valid range, from `dependencies` when present there, else from `devDependencies`.
 *   `optionalDependencies` is never consulted.
 */
export type VersionRequirement =
  | { kind: "none" }
  | { kind: "warning"; message: string }
  | { kind: "range"; range: string; field: "dependencies" | "devDependencies" };

/** semver, loaded only for a workflow that declares a loopx version (see semver.ts). */
const semver = () => import("./semver.js");

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, " ").trim();
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Interprets the text of a workflow package.json (exported for tests and for callers that already read it). */
export async function parseVersionRequirement(text: string): Promise<VersionRequirement> {
  let json: unknown;
  try {
    json = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    return { kind: "warning", message: `package.json is invalid JSON (${oneLine(error instanceof Error ? error.message : String(error))}); loopx version check skipped` };
  }
  if (!isObject(json)) return { kind: "none" };
  for (const field of ["dependencies", "devDependencies"] as const) {
    const deps = json[field];
    if (!isObject(deps) || !Object.hasOwn(deps, "loopx")) continue;
    const declared = deps["loopx"];
    if (typeof declared !== "string" || !(await semver()).isValidRange(declared)) {
      return {
        kind: "warning",
        message: `package.json declares loopx version ${oneLine(JSON.stringify(declared) ?? String(declared))} in ${field}, which is not a valid semver range; loopx version check skipped`,
      };
    }
    return { kind: "range", range: declared, field };
  }
  return { kind: "none" };
}

/**
 * The one line for a declared range the running version does not satisfy (spec §3.2, §10.6), the
 * same for run, run()/runPromise() and install: it names the workflow, the word "version", the
 * declared range and the running version.
 */
export function versionMismatchMessage(workflowName: string, range: string, running: string, note?: string): string {
  return `workflow ${JSON.stringify(workflowName)} declares loopx version ${oneLine(range)}, but the running loopx version is ${running} (not satisfied${note ? `, ${note}` : ""})`;
}

/** True if `version` satisfies `range` (prereleases included, spec §3.2). False for an invalid range or version. */
export async function satisfiesVersion(range: string, version: string): Promise<boolean> {
  return (await semver()).satisfiesVersion(range, version);
}

/**
 * The workflow-level version check (spec §3.2) for a workflow's requirement: the warning to print,
 * if any. A broken package.json or an unsatisfied range is a warning, never an error.
 */
export async function workflowVersionWarning(workflowName: string, requirement: VersionRequirement, running: string): Promise<string | undefined> {
  if (requirement.kind === "warning") return `workflow ${JSON.stringify(workflowName)}: ${requirement.message}`;
  if (requirement.kind === "range" && !(await satisfiesVersion(requirement.range, running))) return versionMismatchMessage(workflowName, requirement.range, running);
  return undefined;
}
