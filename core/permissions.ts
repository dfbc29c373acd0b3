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
