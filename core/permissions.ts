/**
 * The Deno permissions dvergr runs with, as flags: the same set deno.json's `dvergr`,
 * `test`, `bench` and `compile` tasks declare (keep them equal). Used where dvergr starts
 * itself again (MCP job workers, benchmarks, tests of the real CLI).
 */
export const DVERGR_PERMISSIONS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-run",
  "--allow-net",
  "--allow-sys=hostname,osRelease,uid,gid",
];

/**
 * V8 flags dvergr runs with. Its young generation capped at 4 MiB per semi-space (the
 * default grows to 16): dvergr allocates little that lives, and the cap keeps a 1,000-cell
 * run at ~115 MiB resident instead of ~150 in the same time. It also starts at 4 MiB (the
 * default starts smaller and grows): a one-shot command's start then runs no young GC
 * (`check --answer` and `calibrate` of invoice-fields ran 4, ~5-7 ms of pauses, on the main
 * thread and in its sandbox worker), and a long run's young generation is the size it grows
 * to anyway. `gc()` exposed, for the hints of core/gc_hint.ts after every 10,000 records
 * read or committed: a 100,000-cell run then peaks ~10% above a 10,000-cell one instead of
 * ~30% (bench/memory_bench.ts --large).
 * deno.json's `dvergr` and `compile` tasks pass them too.
 */
export const DVERGR_V8_FLAGS =
  "--v8-flags=--min-semi-space-size=4,--max-semi-space-size=4,--expose-gc";

/** Everything `deno run` needs to start dvergr as its tasks do: permissions and V8 flags. */
export const DVERGR_RUN_FLAGS: readonly string[] = [...DVERGR_PERMISSIONS, DVERGR_V8_FLAGS];
