// The docs' examples, run: every ```sh / ```bash / ```ts block of README.md and docs/**/*.md runs in a
// scratch project with the built loopx on PATH (as `loopx`), each page's blocks in order in one
// directory — as a reader following the page would type them — and must exit as the page says.
//
// A block is steered by an HTML comment on the line before its fence (invisible on the site):
//   <!-- example: skip <reason> -->   not run, and the reason says why (a real API key, a real runner)
//   <!-- example: exit <code> -->     runs, and must exit with <code> (default 0)
// A page may hold hidden set-up, run before its first block:
//   <!-- example-setup
//   <shell lines>
//   -->
// TypeScript blocks run with tsx as a program of the scratch project, which has loopx installed
// (node_modules/loopx). `node scripts/docs-examples.mjs [files...]` runs them (default: every page)
// and ends with one line: N run, M skipped, K failed.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RUNNABLE = new Set(["sh", "bash", "ts", "typescript"]);
const EXAMPLE_TIMEOUT_MS = 120_000;

/** The examples of one Markdown text: { line, lang, code, skip?, exit }, and its hidden set-up. */
export function examplesOf(markdown) {
  const lines = markdown.split("\n");
  const examples = [];
  const setup = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === "<!-- example-setup") {
      const end = lines.indexOf("-->", i + 1);
      if (end < 0) throw new Error(`line ${i + 1}: an example-setup comment is not closed with -->`);
      setup.push(lines.slice(i + 1, end).join("\n"));
      i = end;
      continue;
    }
    const fence = /^```([a-z]*)\s*$/.exec(lines[i]);
    if (!fence) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
    if (end < 0) throw new Error(`line ${i + 1}: a code fence is not closed`);
    const lang = fence[1] ?? "";
    if (RUNNABLE.has(lang)) {
      const directive = /^<!-- example: (skip|exit)\b\s*(.*?)\s*-->$/.exec((lines[i - 1] ?? "").trim());
      const example = { line: i + 1, lang, code: lines.slice(i + 1, end).join("\n"), exit: 0 };
      if (directive?.[1] === "skip") {
        if (!directive[2]) throw new Error(`line ${i}: "example: skip" needs a reason`);
        example.skip = directive[2];
      } else if (directive?.[1] === "exit") {
        example.exit = Number(directive[2]);
        if (!Number.isInteger(example.exit)) throw new Error(`line ${i}: "example: exit" needs an exit code, got ${JSON.stringify(directive[2])}`);
      }
      examples.push(example);
    }
    i = end;
  }
  return { setup, examples };
}

/** A scratch HOME with `loopx` on PATH (the built dist/bin.js) and loopx installed for TS programs. */
function scratch(dist) {
  const dir = mkdtempSync(join(tmpdir(), "loopx-docs-example-"));
  const bin = join(dir, ".bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "loopx"), `#!/bin/sh\nexec "${process.execPath}" "${join(dist, "bin.js")}" "$@"\n`);
  chmodSync(join(bin, "loopx"), 0o755);
  const work = join(dir, "work");
  mkdirSync(join(work, "node_modules"), { recursive: true });
  symlinkSync(ROOT, join(work, "node_modules", "loopx"));
  const env = {
    PATH: `${bin}:${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, ".config"),
    XDG_STATE_HOME: join(dir, ".state"),
    XDG_CACHE_HOME: join(dir, ".cache"),
    TERM: "dumb",
    GIT_AUTHOR_NAME: "docs",
    GIT_AUTHOR_EMAIL: "docs@example.com",
    GIT_COMMITTER_NAME: "docs",
    GIT_COMMITTER_EMAIL: "docs@example.com",
  };
  return { dir, work, env };
}

function runBlock(example, index, place) {
  if (example.lang === "ts" || example.lang === "typescript") {
    const file = join(place.work, `example-${index}.mts`);
    writeFileSync(file, example.code);
    return spawnSync(process.execPath, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), file], { cwd: place.work, env: place.env, encoding: "utf8", timeout: EXAMPLE_TIMEOUT_MS });
  }
  // The block's own `cd` carries on to the page's next block, as in the reader's shell.
  const script = `set -e\ncd "$(cat "${place.dir}/.cwd" 2>/dev/null || echo "${place.work}")"\n${example.code}\npwd > "${place.dir}/.cwd"\n`;
  return spawnSync("bash", ["-c", script], { cwd: place.work, env: place.env, encoding: "utf8", timeout: EXAMPLE_TIMEOUT_MS });
}

/** Runs the examples of one page: the failures, each one line naming the page, line and why. */
export function runPage(file, { dist = join(ROOT, "dist") } = {}) {
  const { setup, examples } = examplesOf(readFileSync(file, "utf8"));
  const name = relative(ROOT, file);
  const failures = [];
  let ran = 0;
  let skipped = 0;
  if (examples.every((e) => e.skip)) return { ran, skipped: examples.length, failures };
  const place = scratch(dist);
  try {
    for (const code of setup) {
      const done = spawnSync("bash", ["-ec", code], { cwd: place.work, env: place.env, encoding: "utf8" });
      if (done.status !== 0) return { ran, skipped, failures: [`${name}: its example-setup failed: ${(done.stderr || done.stdout).trim().split("\n").at(-1)}`] };
    }
    for (const [index, example] of examples.entries()) {
      if (example.skip) {
        skipped++;
        continue;
      }
      ran++;
      const done = runBlock(example, index, place);
      const code = done.status ?? (done.signal ? `signal ${done.signal}` : "none");
      if (code !== example.exit) {
        const why = (done.stderr || done.stdout || "").trim().split("\n").slice(-3).join(" | ");
        failures.push(`${name}:${example.line}: the ${example.lang} example exited ${code}, the page says ${example.exit}${why ? `: ${why}` : ""}`);
      }
    }
  } finally {
    rmSync(place.dir, { recursive: true, force: true });
  }
  return { ran, skipped, failures };
}

/** README.md and every page of docs/ (generated reference pages hold no examples). */
export function documentedPages() {
  const pages = [join(ROOT, "README.md")];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) pages.push(path);
    }
  };
  walk(join(ROOT, "docs"));
  return pages;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = process.argv.slice(2).length ? process.argv.slice(2) : documentedPages();
  let ran = 0;
  let skipped = 0;
  const failures = [];
  for (const file of files) {
    const result = runPage(file);
    ran += result.ran;
    skipped += result.skipped;
    failures.push(...result.failures);
  }
  for (const line of failures) console.error(line);
  console.log(`docs examples: ${ran} run, ${skipped} skipped, ${failures.length} failed`);
  process.exit(failures.length ? 1 : 0);
}
