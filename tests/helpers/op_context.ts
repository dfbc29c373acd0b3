/** An op context for tests: unisolated command candidates, the real clock. */
import { openHome } from "../../adapters/store/kv/home.ts";
import { type Home } from "../../core/ports/home.ts";
import type { CheckerRunner } from "../../core/checker.ts";
import type { JobRunner, OpContext } from "../../core/ops/op.ts";
import { composeServices } from "../../adapters/compose.ts";

export function testOpContext(home: Home, runner: CheckerRunner, jobs?: JobRunner): OpContext {
  return {
    home,
    services: composeServices(),
    runner,
    env: (name) => (name === "DVERGR_ISOLATION" ? "none" : undefined),
    cwd: Deno.cwd(),
    clock: () => new Date(),
    jobs,
  };
}

/** A checker runner for tests whose ops never run a checker: it says so if one is asked. */
export const NO_RUNNER: CheckerRunner = {
  check: () => Promise.reject(new Error("these ops do not run checkers")),
  judgeRequests: () => Promise.reject(new Error("these ops do not run checkers")),
  generate: () => Promise.reject(new Error("these ops do not run generators")),
  close() {},
};

/** Runs `f` with a fresh home in a temporary directory (fixed clock, no checker), then removes it. */
export async function withTempHome(
  prefix: string,
  f: (ctx: OpContext, home: Home) => Promise<void>,
): Promise<void> {
  const home = await openHome(await Deno.makeTempDir({ prefix }));
  const ctx: OpContext = {
    home,
    services: composeServices(),
    runner: NO_RUNNER,
    env: () => undefined,
    cwd: Deno.cwd(),
    clock: () => new Date("2026-10-01T12:00:00Z"),
  };
  try {
    await f(ctx, home);
  } finally {
    await home.close();
    await Deno.remove(home.dir, { recursive: true });
  }
}
