import type { Command } from "./context.ts";

/**
 * Every subcommand, loaded lazily so `dvergr --help` and small commands do not pay
 * for the imports of big ones (the MCP SDK alone costs ~250 ms).
 */
export const COMMANDS: Record<string, {
  summary: string;
  load: () => Promise<Command>;
  /**
   * Starts what the command will need (its sandbox) while its modules load; resolves to what
   * releases it once the command has returned (cli/prestart.ts).
   */
  prestart?: (args: string[]) => Promise<() => void>;
}> = {
  init: {
    summary: "write a new bundle to start from (single environment, dataset or web)",
    load: () => import("./init.ts"),
  },
  check: {
    summary: "shape-check a bundle; with --answer, grade an answer",
    load: () => import("./check.ts"),
    // With --answer it grades one answer: its sandbox starts at once.
    prestart: (args) =>
      args.includes("--answer")
        ? import("./prestart.ts").then((m) => m.prestartSandbox(args))
        : Promise.resolve(() => {}),
  },
  calibrate: {
    summary: "prove a bundle's checker grades right (exit 1 when it does not)",
    load: () => import("./calibrate.ts"),
    prestart: (args) => import("./prestart.ts").then((m) => m.prestartSandbox(args)),
  },
  benchmark: {
    summary: "benchmark candidates on a bundle (resumable; scorecard and report)",
    load: () => import("./benchmark.ts"),
    prestart: (args) => import("./prestart.ts").then((m) => m.prestartBenchmarkPool(args)),
  },
  demo: {
    summary: "benchmark two example agents on an example bundle, offline",
    load: () => import("./demo.ts"),
  },
  plan: {
    summary: "plan cases × repetitions from a pilot experiment (fixed-size and sequential)",
    load: () => import("./plan.ts"),
  },
  regrade: {
    summary: "grade an experiment's kept evidence again with a changed checker (no candidate runs)",
    load: () => import("./regrade.ts"),
  },
  show: {
    summary: "show an experiment's cells, or one attempt in full (output, files, transcript)",
    load: () => import("./show.ts"),
  },
  experiments: {
    summary: "list the home's experiments, newest first, with how far each is",
    load: () => import("./experiments.ts"),
  },
  view: {
    summary: "serve a local web viewer of the experiments, their cells and attempts",
    load: () => import("./view.ts"),
  },
  report: {
    summary: "write an experiment's report again: Markdown, HTML, JUnit XML or CSV",
    load: () => import("./report.ts"),
  },
  cases: {
    summary: "turn a table of historical cases into a certified dataset bundle",
    load: () => import("./cases.ts"),
  },
  room: {
    summary: "create rooms, list, read and write their files, show their history",
    load: () => import("./room.ts"),
  },
  list: {
    summary: "list the rooms' bundles with content id and trust tier",
    load: () => import("./list.ts"),
  },
  export: {
    summary: "export a bundle as one EDN file (format dvergr-workflow/1)",
    load: () => import("./export.ts"),
  },
  import: {
    summary: "verify an export and install it in a room or a directory",
    load: () => import("./import.ts"),
  },
  promote: {
    summary: "calibrate a room's bundle and, when it holds, trust it on this host",
    load: () => import("./promote.ts"),
  },
  freeze: {
    summary: "turn a live bundle's fetched pages into a frozen-web bundle",
    load: () => import("./freeze.ts"),
  },
  run: {
    summary: "run a room's bundle once on the room's own files; review and merge its changes",
    load: () => import("./run.ts"),
  },
  runs: {
    summary: "list the home's production runs",
    load: () => import("./runs.ts"),
  },
  review: {
    summary: "list and show reviews of runs; approve or discard what waits for a person",
    load: () => import("./review.ts"),
  },
  deploy: {
    summary: "schedule a room's bundle to run every so often (dvergr serve or tick starts it)",
    load: () => import("./deploy.ts"),
  },
  schedules: {
    summary: "list the home's schedules with their next run, or cancel one",
    load: () => import("./schedules.ts"),
  },
  tick: {
    summary: "start the scheduled runs due now (for cron or systemd timers) and exit",
    load: () => import("./tick.ts"),
  },
  store: {
    summary: "migrate the PostgreSQL store that workers on many machines share",
    load: () => import("./store.ts"),
  },
  worker: {
    summary: "run the cells of experiments open in a PostgreSQL store (any number of machines)",
    load: () => import("./worker.ts"),
  },
  serve: {
    summary: "serve dvergr's operations as MCP tools (stdio, or Streamable HTTP on loopback)",
    load: () => import("./serve.ts"),
  },
};
