import satisfies from "semver/functions/satisfies.js";
import validRange from "semver/ranges/valid.js";

/**
 * semver as loopx reads a workflow's declared version (spec §3.2: prereleases included). A module of
 * its own, imported dynamically by version-requirement.ts: semver builds its regular expressions
 * when loaded, ~10 ms of every `loopx run` under Bun, for the few workflows that declare a version.
 */
const SEMVER_OPTIONS = { includePrerelease: true } as const;

/** True if `range` is a valid semver range. */
export function isValidRange(range: string): boolean {
  return validRange(range, SEMVER_OPTIONS) !== null;
}

/** True if `version` satisfies `range`. False for an invalid range or version. */
export function satisfiesVersion(range: string, version: string): boolean {
  try {
    return satisfies(version, range, SEMVER_OPTIONS);
  } catch {
    return false;
  }
}
