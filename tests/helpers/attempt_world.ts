/** A command attempt's world for tests: /docs/a.md ("hello") and an empty /out, and its context. */
import { createWorld } from "../../adapters/world/world.ts";
import type { World } from "../../core/ports/world_factory.ts";
import type { AttemptContext } from "../../core/bench/candidate.ts";

/** A fresh world and an attempt in it (no case, no budget, /out writable); remove `world.dir` after. */
export async function attemptInWorld(
  task: string,
  timeoutMs: number,
): Promise<{ world: World; ctx: AttemptContext }> {
  const world = await createWorld({ "/docs/a.md": "hello" }, { mkdirs: ["/out"] });
  return {
    world,
    ctx: {
      task,
      caseId: null,
      repetition: 0,
      world: world.files,
      worldDir: world.dir,
      reference: null,
      timeoutMs,
      budgetMicros: 0,
      profile: "developer",
      writable: ["/out"],
      signal: new AbortController().signal,
    },
  };
}
