import assert from "node:assert/strict";
import { runMain } from "../../main.ts";
import { memoryContext } from "../../cli/context.ts";
import { DEMO_AGENTS, demoAgents, HELP } from "../../cli/demo.ts";

Deno.test("dvergr demo benchmarks the two example agents offline and tells where the report is", async () => {
  const home = await Deno.makeTempDir();
  const ctx = memoryContext({ env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" } });
  const code = await runMain(["demo", "--home", home, "--repetitions", "2"], ctx);
  const out = ctx.out.join("");
  assert.equal(code, 0, ctx.err.join(""));
  const lines = out.split("\n");
  assert.match(lines[1], /^Bundle invoice-fields [0-9a-f-]{36}$/);
  // The naive agent gets one invoice of five right; the careful one all five.
  assert.equal(
    lines[2],
    `${"naive".padEnd(40)} reward 0.680  passed 2/10  billed $0.0000  list price $0.0000`,
  );
  assert.equal(
    lines[3],
    `${"careful".padEnd(40)} reward 1.000  passed 10/10  billed $0.0000  list price $0.0000`,
  );
  const path = out.match(/^Report: (.*)$/m)![1];
  assert.match(path, new RegExp(`^${home}/reports/[0-9a-f-]{36}/report\\.md$`));
  const report = await Deno.readTextFile(path);
  assert.match(report, /^# Invoice fields/);
  assert.match(report, /\| date \| 0 \/ 10 \| 6 \/ 10 \|/);
  await Deno.remove(home, { recursive: true });
});

Deno.test("demoAgents() runs the example agents read-only from examples/agents", () => {
  const agents = demoAgents("/usr/bin/deno");
  assert.deepEqual([...agents.keys()], ["naive", "careful"]);
  const naive = agents.get("naive")!;
  assert.ok(naive.mounts!.includes(DEMO_AGENTS));
  assert.match(naive.command, /--allow-read=\. --allow-write=\. .*naive\.ts'$/);
  assert.match(HELP, /dvergr demo/);
});
