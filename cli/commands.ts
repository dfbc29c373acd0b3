import type { Command } from "./context.ts";
import { importLater } from "./import_later.ts";

/** The module `./NAME.ts` beside this one, imported when called (cli/import_later.ts). */
const cli = <M>(name: string) => importLater<M>(`./${name}.ts`, import.meta.url);

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
    load: () => cli<typeof import("./init.ts")>("init"),
  },
  check: {
    summary: "shape-check a bundle; with --answer, grade an answer",
    load: () => cli<typeof import("./check.ts")>("check"),
    // With --answer it grades one answer: its sandbox starts at once.
    prestart: (args) =>
      args.includes("--answer")
        ? cli<typeof import("./prestart.ts")>("prestart").then((m) => m.prestartSandbox(args))
        : Promise.resolve(() => {}),
  },
  calibrate: {
    summary: "prove a bundle's checker grades right (exit 1 when it does not)",
    load: () => cli<typeof import("./calibrate.ts")>("calibrate"),
    prestart: (args) =>
      cli<typeof import("./prestart.ts")>("prestart").then((m) => m.prestartSandbox(args)),
  },
  benchmark: {
    summary: "benchmark candidates on a bundle (resumable; scorecard and report)",
    load: () => cli<typeof import("./benchmark.ts")>("benchmark"),
    prestart: (args) =>
      cli<typeof import("./prestart.ts")>("prestart").then((m) => m.prestartBenchmarkPool(args)),
  },
  demo: {
    summary: "benchmark two example agents on an example bundle, offline",
    load: () => cli<typeof import("./demo.ts")>("demo"),
  },
  plan: {
    summary: "plan cases × repetitions from a pilot experiment (fixed-size and sequential)",
    load: () => cli<typeof import("./plan.ts")>("plan"),
  },
  regrade: {
    summary: "grade an experiment's kept evidence again with a changed checker (no candidate runs)",
    load: () => cli<typeof import("./regrade.ts")>("regrade"),
  },
  show: {
    summary: "show an experiment's cells, or one attempt in full (output, files, transcript)",
    load: () => cli<typeof import("./show.ts")>("show"),
  },
  experiments: {
    summary: "list the home's experiments, newest first, with how far each is",
    load: () => cli<typeof import("./experiments.ts")>("experiments"),
  },
  view: {
    summary: "serve a local web viewer of the experiments, their cells and attempts",
    load: () => cli<typeof import("./view.ts")>("view"),
  },
  report: {
    summary: "write an experiment's report again: Markdown, HTML, JUnit XML or CSV",
    load: () => cli<typeof import("./report.ts")>("report"),
  },
  cases: {
    summary: "turn a table of historical cases into a certified dataset bundle",
    load: () => cli<typeof import("./cases.ts")>("cases"),
  },
  room: {
    summary: "create rooms, list, read and write their files, show their history",
    load: () => cli<typeof import("./room.ts")>("room"),
  },
  list: {
    summary: "list the rooms' bundles with content id and trust tier",
    load: () => cli<typeof import("./list.ts")>("list"),
  },
  export: {
    summary: "export a bundle as one EDN file (format dvergr-workflow/1)",
    load: () => cli<typeof import("./export.ts")>("export"),
  },
  import: {
    summary: "verify an export and install it in a room or a directory",
    load: () => cli<typeof import("./import.ts")>("import"),
  },
  promote: {
    summary: "calibrate a room's bundle and, when it holds, trust it on this host",
    load: () => cli<typeof import("./promote.ts")>("promote"),
  },
  freeze: {
    summary: "turn a live bundle's fetched pages into a frozen-web bundle",
    load: () => cli<typeof import("./freeze.ts")>("freeze"),
  },
  run: {
    summary: "run a room's bundle once on the room's own files; review and merge its changes",
    load: () => cli<typeof import("./run.ts")>("run"),
  },
  runs: {
    summary: "list the home's production runs",
    load: () => cli<typeof import("./runs.ts")>("runs"),
  },
  review: {
    summary: "list and show reviews of runs; approve or discard what waits for a person",
    load: () => cli<typeof import("./review.ts")>("review"),
  },
  deploy: {
    summary: "schedule a room's bundle to run every so often (dvergr serve or tick starts it)",
    load: () => cli<typeof import("./deploy.ts")>("deploy"),
  },
  schedules: {
    summary: "list the home's schedules with their next run, or cancel one",
    load: () => cli<typeof import("./schedules.ts")>("schedules"),
  },
  tick: {
    summary: "start the scheduled runs due now (for cron or systemd timers) and exit",
    load: () => cli<typeof import("./tick.ts")>("tick"),
  },
  store: {
    summary: "migrate the PostgreSQL store that workers on many machines share",
    load: () => cli<typeof import("./store.ts")>("store"),
  },
  worker: {
    summary: "run the cells of experiments open in a PostgreSQL store (any number of machines)",
    load: () => cli<typeof import("./worker.ts")>("worker"),
  },
  serve: {
    summary: "serve dvergr's operations as MCP tools (stdio, or Streamable HTTP on loopback)",
    load: () => cli<typeof import("./serve.ts")>("serve"),
  },
};
