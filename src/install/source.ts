import { LoopxError } from "../core/errors.js";

/** Where an install comes from, after the spec §10.1 rules have been applied. */
export type InstallSource =
  | {
      kind: "git";
      /** What `git clone` is given (the source as typed, or the expanded GitHub shorthand). */
      url: string;
      /** Name for a single-workflow source: the repository name without `.git` (spec §10.2). */
      name: string;
    }
  | {
      kind: "tarball";
      url: string;
      /** Name for a single-workflow source: the archive name without `.tar.gz`/`.tgz` (spec §10.2). */
      name: string;
    };

const KNOWN_GIT_HOSTS = new Set(["github.com", "gitlab.com", "bitbucket.org"]);
/** One `org` or `repo` segment of the GitHub shorthand (GitHub's own character set; never `.`/`..`). */
const SHORTHAND_SEGMENT = /^(?!\.{1,2}$)[A-Za-z0-9_.-]+$/;
/** scp-like git addresses (`git@host:org/repo.git`), which are not WHATWG URLs. */
const SCP_LIKE = /^[A-Za-z0-9._~-]+@[A-Za-z0-9.-]+:[^\s]+$/;

const SUPPORTED = "expected org/repo, a git URL, or a URL whose path ends in .tar.gz or .tgz";

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function lastSegment(path: string): string {
  const segments = path.split("/").filter((segment) => segment !== "");
  return segments[segments.length - 1] ?? "";
}

function stripSuffix(text: string, suffix: string): string {
  return text.endsWith(suffix) ? text.slice(0, -suffix.length) : text;
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** A URL for messages: credentials are never repeated back. */
export function displayUrl(text: string): string {
  const url = parseUrl(text);
  if (!url || (url.username === "" && url.password === "")) return text;
  url.username = "";
  url.password = "";
  return url.href;
}

/**
 * Classifies an install source by the spec §10.1 rules, in order: GitHub shorthand, known git
 * hosts, `.git` URLs, tarball URLs; anything else is refused. Pure: no I/O.
 */
export function detectSource(source: string): InstallSource {
  const shown = JSON.stringify(displayUrl(source));
  if (source.trim() === "") throw new LoopxError(`invalid source ${shown}: ${SUPPORTED}`);

  // 1. org/repo shorthand: no protocol, exactly one slash, no further segments.
  if (!source.includes("://") && !source.includes(":")) {
    const parts = source.split("/");
    if (parts.length === 2 && SHORTHAND_SEGMENT.test(parts[0]!) && SHORTHAND_SEGMENT.test(parts[1]!)) {
      const [org, repo] = parts as [string, string];
      if (repo.endsWith(".git")) {
        throw new LoopxError(
          `invalid source ${shown}: the org/repo shorthand must not end in .git (use the full URL https://github.com/${org}/${repo})`,
        );
      }
      return { kind: "git", url: `https://github.com/${org}/${repo}.git`, name: repo };
    }
  }

  const url = parseUrl(source);
  if (url === undefined) {
    if (SCP_LIKE.test(source) && source.endsWith(".git")) {
      // 3. `.git` URL in git's scp-like form.
      return { kind: "git", url: source, name: stripSuffix(lastSegment(source.slice(source.indexOf(":") + 1)), ".git") };
    }
    throw new LoopxError(`unsupported source ${shown}: ${SUPPORTED} (a local directory or archive: loopx install --local <path>; single-file installs are not supported)`);
  }

  // 2. Known git hosts: only /<owner>/<repo>[.git][/] is git; other paths fall through.
  if (KNOWN_GIT_HOSTS.has(url.hostname.toLowerCase())) {
    const match = url.pathname.match(/^\/([^/]+)\/([^/]+?)\/?$/);
    if (match) {
      return { kind: "git", url: source, name: stripSuffix(decode(match[2]!), ".git") };
    }
  }

  // 3. Any other URL ending in .git.
  if (source.endsWith(".git")) {
    return { kind: "git", url: source, name: stripSuffix(decode(lastSegment(url.pathname)), ".git") };
  }

  // 4. Tarball: the pathname (query and fragment ignored) ends in .tar.gz or .tgz.
  const pathname = url.pathname;
  if (pathname.endsWith(".tar.gz") || pathname.endsWith(".tgz")) {
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new LoopxError(`unsupported source ${shown}: tarballs are downloaded over http or https, not ${url.protocol.replace(/:$/, "")}`);
    }
    const archive = decode(pathname.slice(pathname.lastIndexOf("/") + 1));
    const name = archive.endsWith(".tar.gz") ? archive.slice(0, -".tar.gz".length) : archive.slice(0, -".tgz".length);
    return { kind: "tarball", url: url.href, name };
  }

  // 5. Anything else.
  throw new LoopxError(`unsupported source ${shown}: single-file installs are not supported (${SUPPORTED})`);
}
