// The direction of src/, held by dependency-cruiser in `npm run lint` (ARCHITECTURE.md draws it).
// Each layer imports only the layers below it:
//
//   core (pure: the loop, the event schema, run states, durations)
//     <- os (procfs, process groups, xdg, atomic/complete writes, builtins, lazy fs, the one stderr reopen)
//       <- runtime (platform, spawn, supervisor, script runner, loaders)
//       <- records (a floor under the features: the one writer, reader, follower, wording; core and os only)
//         <- features (parts, control, guardian, install, receipts, hooks, telemetry, worktree)
//           <- engine (validates a run into its plan, composes the features' parts)
//             <- drivers (cli, api, dashboard, and the entry files bin.ts, index.ts, script.ts)
//
// src/version.ts reads package.json: it sits with os. A new feature folder is added to FEATURES;
// features do not import each other, except for the few pairs in ALLOWED, each with its reason.

/** The feature folders (src/<name>/). Add yours here. */
const FEATURES = ["parts", "control", "guardian", "install", "receipts", "hooks", "telemetry", "worktree", "sandbox", "stall"];

/** The only imports between features: [from, to, why]. Keep this list short. */
const ALLOWED = [
  ["guardian", "parts", "the guardian ends a dead run's strays and scratch dir as those parts would"],
  ["guardian", "hooks", "the guardian runs the end-of-run hook of a run whose loopx died"],
];

const DRIVERS = "^src/(cli|api|dashboard)/|^src/(bin|index|script)\\.ts$";
const features = `^src/(${FEATURES.join("|")})/`;
const below = (...layers) => `^src/(${layers.join("|")})/|^src/version\\.ts$`;

/** Node's modules that do I/O or reach the OS: never in core. */
const IMPURE_BUILTINS = "^(node:)?(fs|fs/promises|child_process|crypto|os|net|http|https|tty|worker_threads)$";

const featureIsolation = FEATURES.map((feature) => {
  const allowed = ALLOWED.filter(([from]) => from === feature).map(([, to]) => to);
  const others = FEATURES.filter((other) => other !== feature && !allowed.includes(other));
  return {
    name: `feature-${feature}-isolated`,
    comment: `src/${feature}/ imports no other feature folder${allowed.length ? ` (allowed: ${allowed.join(", ")})` : ""}; the engine composes them`,
    severity: "error",
    from: { path: `^src/${feature}/` },
    to: { path: `^src/(${others.join("|")})/` },
  };
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "no import circles (dynamic and type-only imports count): a module that needs its importer's table takes it as a parameter",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "core-is-pure",
      comment: "src/core/ does no I/O: no file system, processes, randomness, OS, network or terminal (its host and options bring those in)",
      severity: "error",
      from: { path: "^src/core/" },
      to: { dependencyTypes: ["core"], path: IMPURE_BUILTINS },
    },
    {
      name: "core-imports-only-core",
      comment: "src/core/ is the bottom layer: it imports nothing else of src/",
      severity: "error",
      from: { path: "^src/core/" },
      to: { path: "^src/", pathNot: "^src/core/" },
    },
    {
      name: "records-reading-is-pure",
      comment: "records/ parse, run-state, wording and the tables (reading and wording records) do no I/O either: store.ts, writer.ts and runs.ts do",
      severity: "error",
      from: { path: "^src/records/(parse|run-state|wording|tables|table-layout|run-detail|run-detail-table|detail-rows|chunked-lines)\\.ts$" },
      to: { dependencyTypes: ["core"], path: IMPURE_BUILTINS },
    },
    {
      name: "os-imports-core-only",
      comment: "src/os/ sits on core only",
      severity: "error",
      from: { path: "^src/os/|^src/version\\.ts$" },
      to: { path: "^src/", pathNot: below("core", "os") },
    },
    {
      name: "runtime-imports-below",
      comment: "src/runtime/ sits on core and os only",
      severity: "error",
      from: { path: "^src/runtime/" },
      to: { path: "^src/", pathNot: below("core", "os", "runtime") },
    },
    {
      name: "records-imports-core-and-os",
      comment: "src/records/ is a floor under the features: it sits on core and os only",
      severity: "error",
      from: { path: "^src/records/" },
      to: { path: "^src/", pathNot: below("core", "os", "records") },
    },
    {
      name: "records-full-disk-is-private",
      comment: "the writer's full-disk steps (reserve.ts, room.ts) are records/'s own: others close a record through records/close.ts",
      severity: "error",
      from: { pathNot: "^src/records/" },
      to: { path: "^src/records/(reserve|room)\\.ts$" },
    },
    {
      name: "features-import-below",
      comment: "a feature never imports the engine or a driver",
      severity: "error",
      from: { path: features },
      to: { path: `^src/engine/|${DRIVERS}` },
    },
    ...featureIsolation,
    {
      name: "engine-imports-below-drivers",
      comment: "the engine is called by the drivers, never the other way round",
      severity: "error",
      from: { path: "^src/engine/" },
      to: { path: DRIVERS },
    },
    {
      name: "not-to-unresolvable",
      comment: "every import resolves",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    parser: "swc",
  },
};
