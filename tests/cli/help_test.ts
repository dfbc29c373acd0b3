import assert from "node:assert/strict";
import { COMMANDS } from "../../cli/commands.ts";
import { memoryContext } from "../../cli/context.ts";
import { mainHelp, runMain } from "../../main.ts";

for (const [name, entry] of Object.entries(COMMANDS)) {
  Deno.test(`dvergr ${name} --help lists every flag the command accepts`, async () => {
    const cmd = await entry.load();
    assert.ok(cmd.HELP.startsWith(`dvergr ${name}`), "help starts with its usage line");
    for (const [flag, spec] of Object.entries(cmd.OPTIONS)) {
      assert.ok(cmd.HELP.includes(`--${flag}`), `help of "${name}" lists --${flag}`);
      if (spec.short) assert.ok(cmd.HELP.includes(`-${spec.short}`), `help lists -${spec.short}`);
    }
    const ctx = memoryContext();
    assert.equal(await runMain([name, "--help"], ctx), 0);
    assert.equal(ctx.out.join(""), cmd.HELP);
  });
}

Deno.test("dvergr --help lists every command", () => {
  const help = mainHelp();
  for (const name of Object.keys(COMMANDS)) assert.match(help, new RegExp(`^  ${name} `, "m"));
});

Deno.test("runMain() refuses an unknown command with exit 2 and a hint", async () => {
  const ctx = memoryContext();
  assert.equal(await runMain(["frobnicate"], ctx), 2);
  assert.match(
    ctx.err.join(""),
    /^error\[USAGE\]: Unknown command "frobnicate"\nhint: Known commands: /,
  );
});

Deno.test("runMain() refuses an unknown flag with exit 2, as JSON under --json", async () => {
  const ctx = memoryContext();
  assert.equal(await runMain(["check", "--nope", "--json"], ctx), 2);
  const out = JSON.parse(ctx.out.join(""));
  assert.equal(out.error.code, "USAGE");
  assert.match(out.error.message, /--nope/);
});
