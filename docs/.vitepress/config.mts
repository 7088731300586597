import { defineConfig } from "vitepress";

// The docs site (VitePress: Markdown in docs/, a static site in docs/.vitepress/dist, its own local
// search index built in — no network at build time or in the browser). DOCS_BASE is the path the
// site is served under (GitHub Pages: /<repository>/); "/" when it is not set.
export default defineConfig({
  title: "loopx",
  description: "Loop Extender: run loops of scripts — the engine around agent CLIs.",
  base: process.env.DOCS_BASE ?? "/",
  cleanUrls: false,
  lastUpdated: false,
  srcExclude: ["**/README.md"],
  markdown: {
    // The pages show commands with placeholders (`loopx run <workflow>`) in plain prose: they are
    // text, never HTML. The example runner's comments (scripts/docs-examples.mjs) stay invisible.
    html: false,
    config(md) {
      md.core.ruler.before("normalize", "example-comments", (state) => {
        state.src = state.src.replace(/^<!-- example(?:-setup\n[\s\S]*?\n-->|:[^\n]*-->)\n?/gm, "");
      });
    },
  },
  themeConfig: {
    search: { provider: "local" },
    nav: [
      { text: "Guide", link: "/guide/first-loop" },
      { text: "Reference", link: "/reference/commands" },
      { text: "Internals", link: "/internals/architecture" },
    ],
    sidebar: [
      {
        text: "Guides",
        items: [
          { text: "Your first loop", link: "/guide/first-loop" },
          { text: "Installing loopx", link: "/guide/install" },
          { text: "Structured output and goto", link: "/guide/structured-output" },
          { text: "Running agent CLIs", link: "/guide/agents" },
          { text: "Agent presets and failures", link: "/guide/agent-clis" },
          { text: "Agents inside a fence", link: "/guide/sandbox" },
          { text: "The stall sensor", link: "/guide/stall" },
          { text: "Receipts and budgets", link: "/guide/budgets" },
          { text: "Parallel loops with worktrees", link: "/guide/worktrees" },
          { text: "Notifications", link: "/guide/notifications" },
          { text: "Watching, steering, resuming", link: "/guide/watching" },
          { text: "The dashboard", link: "/guide/dashboard" },
          { text: "OpenTelemetry", link: "/guide/opentelemetry" },
          { text: "CI and Kubernetes", link: "/guide/ci" },
          { text: "The programmatic API", link: "/guide/api" },
          { text: "Time limits and strays", link: "/guide/limits" },
          { text: "Run variables", link: "/guide/variables" },
          { text: "Troubleshooting", link: "/guide/troubleshooting" },
        ],
      },
      {
        text: "Reference",
        items: [
          { text: "Commands", link: "/reference/commands" },
          { text: "Run options", link: "/reference/run-options" },
          { text: "Environment variables", link: "/reference/environment" },
          { text: "Exit codes", link: "/reference/exit-codes" },
          { text: "Run states", link: "/reference/run-states" },
          { text: "The run record", link: "/reference/record" },
          { text: "Receipts", link: "/reference/receipts" },
        ],
      },
      {
        text: "Internals",
        items: [
          { text: "Architecture", link: "/internals/architecture" },
          { text: "Development and releasing", link: "/internals/development" },
        ],
      },
    ],
  },
});
