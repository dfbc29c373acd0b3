/**
 * The exit-code census: bad input and a hostile environment end in exit 2 with the file or
 * flag named and no stack trace — never exit 3, which is kept for dvergr's own bugs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { memoryContext } from "../../cli/context.ts";
import { runMain } from "../../main.ts";
import { osProblem } from "../../adapters/files/os_error.ts";
import { exitCodeOf } from "../../cli/render.ts";

const INVOICES = new URL("../../examples/workflows/invoice-fields", import.meta.url).pathname;

async function dvergr(cwd: string, ...args: string[]) {
  const ctx = memoryContext({ cwd, env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" } });
  const code = await runMain(args, ctx);
  return { code, out: ctx.out.join(""), err: ctx.err.join("") };
}

function assertRefused(r: { code: number; err: string }, named: RegExp): void {
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, named);
  assert.doesNotMatch(r.err, /internal error|\n\s+at /);
}

async function copyBundle(to: string): Promise<void> {
  const out = await new Deno.Command("cp", { args: ["-r", INVOICES, to] }).output();
  assert.ok(out.success);
}

Deno.test("check, calibrate, benchmark and export refuse a fixture name that is not UTF-8", async () => {
  const root = await Deno.makeTempDir();
  const dir = join(root, "bad");
  await copyBundle(dir);
  // A name with the byte 0xFF, which no UTF-8 text holds.
  const made = await new Deno.Command("sh", {
    args: ["-c", `touch "${dir}/cases/inv-001/fixtures/x$(printf '\\377').txt"`],
  }).output();
  assert.ok(made.success);
  for (
    const args of [
      ["check", dir],
      ["calibrate", dir],
      ["export", dir, "-o", join(root, "e.edn")],
      ["benchmark", dir, "--candidate", "builtin:noop", "--home", join(root, "h")],
    ]
  ) {
    assertRefused(await dvergr(root, ...args), /not UTF-8/);
  }
  await Deno.remove(root, { recursive: true });
});

Deno.test("benchmark refuses --home naming a file and --report naming a directory before any cell", async () => {
  const root = await Deno.makeTempDir();
  await Deno.writeTextFile(join(root, "afile"), "");
  await Deno.mkdir(join(root, "rdir"));
  assertRefused(
    await dvergr(root, "benchmark", INVOICES, "--candidate", "builtin:noop", "--home", "afile"),
    /home "[^"]*afile": it is a file/,
  );
  const r = await dvergr(
    root,
    "benchmark",
    INVOICES,
    "--candidate",
    "builtin:noop",
    "--home",
    "h",
    "--report",
    "rdir",
  );
  assertRefused(r, /--report "[^"]*rdir": it is a directory/);
  // Refused before any cell ran: no experiment was started in the home.
  await assert.rejects(() => Deno.stat(join(root, "h")));
  await Deno.remove(root, { recursive: true });
});

Deno.test("export -o and cases --out refuse places that cannot be written, naming them", async () => {
  const root = await Deno.makeTempDir();
  await Deno.writeTextFile(join(root, "afile"), "");
  await Deno.writeTextFile(join(root, "t.csv"), "id,text,account\nB1,a,4400\n");
  for (const o of ["/proc/dvergr.edn", "/sys/dvergr.edn", "afile/x.edn", "."]) {
    assertRefused(await dvergr(root, "export", INVOICES, "-o", o), /Cannot write -o/);
  }
  const cases = ["cases", "t.csv", "--id", "id", "--inputs", "text", "--outcome", "account:exact"];
  for (const out of ["afile/x", "/proc/dvergr-cases", "/sys/dvergr-cases"]) {
    const r = await dvergr(root, ...cases, "--out", out);
    assertRefused(r, /afile|proc|sys/);
  }
  await Deno.remove(root, { recursive: true });
});

Deno.test("import --dir refuses a path beyond PATH_MAX with exit 2", async () => {
  const root = await Deno.makeTempDir();
  const made = await dvergr(root, "export", INVOICES, "-o", "e.edn");
  assert.equal(made.code, 0, made.err);
  const long = join(root, ...Array.from({ length: 20 }, () => "d".repeat(250)));
  assertRefused(await dvergr(root, "import", "e.edn", "--dir", long), /too long|File name/);
  await Deno.remove(root, { recursive: true });
});

Deno.test("osProblem() makes errors of the environment exit-2 errors naming what the system said", () => {
  for (
    const message of [
      "No space left on device (os error 28): write '/x/out/a.edn'",
      "Read-only file system (os error 30): mkdir '/ro/out'",
      "File name too long (os error 36): stat '/x/ddd'",
    ]
  ) {
    const e = osProblem(new Error(message));
    assert.ok(e);
    assert.equal(exitCodeOf(e), 2);
    assert.equal(e.code, "IO");
    assert.ok(e.message.includes(message.split(":")[1].trim()));
  }
  assert.equal(osProblem(new TypeError("x is undefined")), null);
  assert.equal(osProblem(new RangeError("Maximum call stack size exceeded")), null);
});

Deno.test("import refuses /dev/zero and a FIFO as the export instead of reading forever", async () => {
  const root = await Deno.makeTempDir();
  const fifo = join(root, "fifo");
  assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success);
  for (const file of ["/dev/zero", fifo]) {
    assertRefused(await dvergr(root, "import", file, "--dir", "d"), /not a regular file/);
  }
  await Deno.remove(root, { recursive: true });
});
