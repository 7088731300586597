// The release workflow's first step: the pushed tag must be "v" + package.json's version.
// Usage: node scripts/check-tag.mjs <tag>      e.g. node scripts/check-tag.mjs "$GITHUB_REF_NAME"
// On success prints one line and, under GitHub Actions, writes `version=` and `prerelease=`
// (true for versions like 1.2.0-rc.1) to $GITHUB_OUTPUT; otherwise one line on stderr and exit 1.
import { appendFileSync, readFileSync } from "node:fs";
import semver from "semver";

const tag = process.argv[2];
const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
if (!tag) {
  console.error("check-tag: missing tag argument (e.g. v" + version + ")");
  process.exit(1);
}
if (!semver.valid(version)) {
  console.error(`check-tag: package.json version ${JSON.stringify(version)} is not a semantic version`);
  process.exit(1);
}
if (tag !== `v${version}`) {
  console.error(`check-tag: tag ${tag} does not match package.json version ${version} (expected tag v${version})`);
  process.exit(1);
}
const prerelease = semver.prerelease(version) !== null;
if (process.env.GITHUB_OUTPUT) appendFileSync(process.env.GITHUB_OUTPUT, `version=${version}\nprerelease=${prerelease}\n`);
console.log(`check-tag: tag ${tag} matches package.json version ${version}${prerelease ? " (prerelease)" : ""}`);
