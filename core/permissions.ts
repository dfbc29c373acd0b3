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
 * V8's young generation capped at 4 MiB per semi-space (its default grows to 16): dvergr
 * allocates little that lives, and the cap keeps a 1,000-cell run at ~115 MiB resident
 * instead of ~150 with no measurable cost in speed (bench/memory_bench.ts). deno.json's
 * `dvergr` and `compile` tasks pass it too.
 */
export const DVERGR_V8_FLAGS = "--v8-flags=--max-semi-space-size=4";

/** Everything `deno run` needs to start dvergr as its tasks do: permissions and V8 flags. */
export const DVERGR_RUN_FLAGS: readonly string[] = [...DVERGR_PERMISSIONS, DVERGR_V8_FLAGS];
