import assert from "node:assert/strict";
import { COMMANDS } from "../../cli/commands.ts";
import { memoryContext } from "../../cli/context.ts";
import { mainHelp, runMain } from "../../main.ts";
import { checkFlags } from "../../cli/args.ts";

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

for (const [name, entry] of Object.entries(COMMANDS)) {
  Deno.test(`dvergr ${name}: parse() reads its arguments without touching anything, refusing an unknown flag`, async () => {
    const cmd = await entry.load();
    assert.equal(typeof cmd.parse, "function");
    assert.equal(typeof cmd.run, "function");
    // No context is given to parse(): whatever it reads, it cannot print, read files or exit.
    assert.throws(() => cmd.parse(["--no-such-flag"]), /Cannot parse arguments|--no-such-flag/);
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

Deno.test("runMain() answers a mistyped flag with the nearest flag, not the parser's message", async () => {
  const ctx = memoryContext();
  assert.equal(await runMain(["benchmark", "x", "--candidat", "builtin:noop"], ctx), 2);
  const err = ctx.err.join("");
  assert.match(
    err,
    /^error\[USAGE\]: Unknown flag --candidat for "dvergr benchmark"\nhint: Did you mean --candidate\? /,
  );
  assert.ok(!/To specify a positional argument/.test(err), err);
});

Deno.test("runMain() says which flag lacks its value, and which takes none", async () => {
  const missing = memoryContext();
  assert.equal(await runMain(["benchmark", "x", "--home"], missing), 2);
  assert.match(missing.err.join(""), /Cannot use --home of "dvergr benchmark": it needs a value/);
  const extra = memoryContext();
  assert.equal(await runMain(["check", "x", "--json=yes"], extra), 2);
  assert.match(extra.out.join("") + extra.err.join(""), /--json .*it is a switch/);
});

Deno.test("checkFlags() skips the values of string flags and what follows --", () => {
  const options = { candidate: { type: "string" }, json: { type: "boolean" } } as const;
  checkFlags("benchmark", ["--candidate", "--weird-value", "--json", "--", "--anything"], options);
  checkFlags("benchmark", ["--candidate=x", "-1"], options);
  assert.throws(() => checkFlags("benchmark", ["--jsn"], options), /Unknown flag --jsn/);
});

Deno.test("runMain() suggests the nearest command for a mistyped one", async () => {
  const ctx = memoryContext();
  assert.equal(await runMain(["benchmrk"], ctx), 2);
  assert.match(ctx.err.join(""), /Unknown command "benchmrk"\nhint: Did you mean "benchmark"\? /);
});

/** Shell words of a command line (single and double quotes, backslash-newline joins). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "\\" && line[i + 1] === "\n") {
      i++;
      continue;
    }
    if (/\s/.test(c)) {
      if (word !== null) words.push(word), word = null;
    } else if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      assert.ok(end > i, `unclosed quote in ${line}`);
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else word = (word ?? "") + c;
  }
  if (word !== null) words.push(word);
  return words;
}

for (const [name, entry] of Object.entries(COMMANDS)) {
  Deno.test(`dvergr ${name} --help has an example that parses, and the exit statuses`, async () => {
    const cmd = await entry.load();
    const section = /^Examples?:.*\n((?: {2}dvergr .*\n(?: {4}.*\n)*)+)/m.exec(cmd.HELP);
    assert.ok(section, `help of "${name}" has an Example: section with dvergr command lines`);
    const lines = section[1].replace(/\\\n {4}/g, " ").trimEnd().split("\n");
    let own = 0;
    for (const line of lines) {
      const words = shellWords(line);
      // What follows && or a redirection is another command.
      const end = words.findIndex((w) => ["&&", "|", ">", ";"].includes(w));
      const args = words.slice(0, end === -1 ? words.length : end);
      assert.equal(args[0], "dvergr", line);
      assert.ok(COMMANDS[args[1]], `${line}: no command ${args[1]}`);
      // An example may show a command that comes first (a benchmark before a plan).
      (await COMMANDS[args[1]].load()).parse(args.slice(2));
      if (args[1] === name) own++;
    }
    assert.ok(own > 0, `the example of "${name}" runs dvergr ${name}`);
    assert.match(cmd.HELP, /^Exit status: 0 /m, `help of "${name}" says its exit statuses`);
  });
}
