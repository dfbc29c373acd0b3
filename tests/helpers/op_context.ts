/** An op context for tests: unisolated command candidates, the real clock. */
import type { Home } from "../../core/io/home.ts";
import type { CheckerRunner } from "../../core/checker.ts";
import type { JobRunner, OpContext } from "../../core/ops/op.ts";

export function testOpContext(home: Home, runner: CheckerRunner, jobs?: JobRunner): OpContext {
  return {
    home,
    runner,
    env: (name) => (name === "DVERGR_ISOLATION" ? "none" : undefined),
    cwd: Deno.cwd(),
    clock: () => new Date(),
    jobs,
  };
}
