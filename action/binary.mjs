// Which loopx the action runs: a given path (`loopx-path`), or the standalone binary of the
// release (the action's own version unless `version` says otherwise) — downloaded once per runner
// into its tool cache and run only if its SHA-256 is the one the release's SHA256SUMS names.
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { get as httpsGet } from "node:https";
import { dirname, join } from "node:path";

/** The release asset for this runner: loopx-<linux|darwin>-<x64|arm64>. */
function assetName(platform = process.platform, arch = process.arch) {
  if (platform !== "linux" && platform !== "darwin") throw new Error(`loopx has no binary for ${platform} runners (Linux and macOS only)`);
  if (arch !== "x64" && arch !== "arm64") throw new Error(`loopx has no binary for ${arch} runners (x64 and arm64 only)`);
  return `loopx-${platform}-${arch}`;
}

/** package.json beside action.yml: the action's own version and repository. */
function ownPackage() {
  return JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
}

/** The action's own version. */
function ownVersion() {
  return ownPackage().version;
}

const REPOSITORY = /^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/;

/**
 * The repository (owner/name) whose release the action runs, found as a real runner allows: in a
 * composite action's `run` step GitHub leaves GITHUB_ACTION_REPOSITORY empty (actions/runner#2473),
 * so action.yml passes `github.action_repository` through `env:` as LOOPX_ACTION_REPOSITORY; where
 * that is empty too (an action used by another composite action), the action's checkout path says
 * it (GITHUB_ACTION_PATH is <runner>/_actions/<owner>/<name>/<ref>); last, package.json's
 * `repository` (an action used from a checkout, `uses: ./`).
 */
function actionRepository(env) {
  for (const given of [env.LOOPX_ACTION_REPOSITORY, env.GITHUB_ACTION_REPOSITORY]) if (given && REPOSITORY.test(given.trim())) return given.trim();
  const fromPath = /\/_actions\/([^/]+)\/([^/]+)\/[^/]+\/?$/.exec(env.GITHUB_ACTION_PATH ?? "");
  if (fromPath && REPOSITORY.test(`${fromPath[1]}/${fromPath[2]}`)) return `${fromPath[1]}/${fromPath[2]}`;
  const repository = ownPackage().repository;
  const url = typeof repository === "string" ? repository : repository?.url ?? "";
  const fromPackage = /github\.com[/:]([^/]+)\/([^/]+?)(?:\.git)?\/?$/.exec(url);
  if (fromPackage) return `${fromPackage[1]}/${fromPackage[2]}`;
  throw new Error("cannot tell which repository the action comes from (no github.action_repository, GITHUB_ACTION_PATH or package.json repository): set the input loopx-path");
}

/** GET `url` (following redirects, as GitHub's release downloads do) into a Buffer. */
function download(url, redirects = 5) {
  return new Promise((resolve, reject) => {
    const get = url.startsWith("https:") ? httpsGet : httpGet;
    const request = get(url, { headers: { "user-agent": "loopx-action" } }, (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400 && response.headers.location && redirects > 0) {
        response.resume();
        resolve(download(new URL(response.headers.location, url).toString(), redirects - 1));
        return;
      }
      if (status !== 200) {
        response.resume();
        reject(new Error(`downloading ${url} failed: HTTP ${status}`));
        return;
      }
      const chunks = [];
      response.on("data", (chunk) => chunks.push(chunk));
      response.on("end", () => resolve(Buffer.concat(chunks)));
      response.on("error", reject);
    });
    request.setTimeout(60_000, () => request.destroy(new Error(`downloading ${url} timed out`)));
    request.on("error", (error) => reject(new Error(error.message.startsWith("downloading") ? error.message : `downloading ${url} failed: ${error.message}`)));
  });
}

/** The SHA-256 SHA256SUMS gives for `name`, or an error naming what is missing. */
function expectedSum(sums, name, url) {
  for (const line of sums.split("\n")) {
    const match = /^([0-9a-f]{64}) [ *]?(\S+)$/.exec(line.trim());
    if (match && match[2] === name) return match[1];
  }
  throw new Error(`${url} names no ${name}`);
}

/** Downloads, checks and caches the release binary; returns its path. */
async function releaseBinary(env, version) {
  const name = assetName();
  const cache = join(env.RUNNER_TOOL_CACHE || env.RUNNER_TEMP || "/tmp", "loopx", version, name);
  const bin = join(cache, "loopx");
  if (existsSync(bin)) return bin;
  const server = env.GITHUB_SERVER_URL || "https://github.com";
  const repository = actionRepository(env);
  const base = `${server}/${repository}/releases/download/v${version}`;
  const sumsUrl = `${base}/SHA256SUMS`;
  const from = `(the action ${repository}${env.LOOPX_ACTION_REF ? `@${env.LOOPX_ACTION_REF}` : ""} runs loopx ${version})`;
  const fetched = (url) => download(url).catch((error) => Promise.reject(new Error(`${error.message} ${from}`)));
  const want = expectedSum((await fetched(sumsUrl)).toString("utf8"), name, sumsUrl);
  const body = await fetched(`${base}/${name}`);
  const have = createHash("sha256").update(body).digest("hex");
  if (have !== want) throw new Error(`${base}/${name} has SHA-256 ${have}, SHA256SUMS says ${want}: not run`);
  mkdirSync(cache, { recursive: true });
  const temp = join(dirname(bin), `.loopx-${process.pid}`);
  try {
    writeFileSync(temp, body, { mode: 0o755 });
    chmodSync(temp, 0o755);
    renameSync(temp, bin); // never a half-written binary in the cache
  } finally {
    rmSync(temp, { force: true });
  }
  return bin;
}

/** The loopx to run: `loopxPath` when given, else the release binary of `version` (default: the action's). */
export async function resolveLoopx(env, version, loopxPath) {
  if (loopxPath) {
    if (!existsSync(loopxPath)) throw new Error(`the input loopx-path ${loopxPath} does not exist`);
    return loopxPath;
  }
  const wanted = (version || ownVersion()).replace(/^v/, "");
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(wanted)) throw new Error(`the input version ${JSON.stringify(version)} is not a loopx version (e.g. 1.2.3)`);
  return releaseBinary(env, wanted);
}
