/**
 * sandbox/load_cache.ts sandboxIdentity(): the digest of the sandbox modules is kept with a
 * fingerprint of their stats and used while they are unchanged; a module rewritten, even at
 * the same size, gets a new identity. Runs a copy of the module in a directory of its own.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

const ROOT = new URL("../../", import.meta.url);

/** A tree holding load_cache.ts, the core modules it imports, another module and deno.json. */
async function copyTree(dir: string): Promise<void> {
  await Deno.mkdir(join(dir, "sandbox"));
  await Deno.mkdir(join(dir, "core"));
  for (const f of ["sandbox/load_cache.ts", "core/path.ts", "core/sha256.ts", "core/version.ts"]) {
    await Deno.copyFile(new URL(f, ROOT), join(dir, f));
  }
  await Deno.writeTextFile(join(dir, "sandbox", "other.ts"), "export const x = 1;\n");
  await Deno.writeTextFile(join(dir, "deno.json"), "{}\n");
}

/**
 * The record kept for the modules under `dir`: the tests' processes share their environment,
 * so another test module's start may keep the repository's own beside it in the same cache.
 */
function recordOf(records: string, dir: string): string {
  const mine = [...Deno.readDirSync(records)].map((e) => join(records, e.name))
    .filter((f) => Deno.readTextFileSync(f).includes(`${dir}/sandbox/`));
  assert.equal(mine.length, 1, "one digest kept for the copy's modules");
  return mine[0];
}

let instances = 0;

/** A fresh instance of the copy (nothing memoized in the process). */
async function instanceOf(dir: string) {
  const url = new URL(`file://${join(dir, "sandbox", "load_cache.ts")}?${instances++}`);
  return await import(url.href) as typeof import("../../sandbox/load_cache.ts");
}

async function identityOf(dir: string): Promise<string> {
  return (await instanceOf(dir)).sandboxIdentity();
}

Deno.test("sandboxIdentity() keeps its digest while the modules are unchanged, and not after", async () => {
  const dir = await Deno.makeTempDir();
  const oldCache = Deno.env.get("XDG_CACHE_HOME");
  Deno.env.set("XDG_CACHE_HOME", join(dir, "cache"));
  try {
    await copyTree(dir);
    // Files written in the last 2 s may still be written to: their digest is not kept yet.
    await new Promise((r) => setTimeout(r, 2100));
    const first = await identityOf(dir);
    const records = join(dir, "cache", "dvergr", "sandbox-digests");
    const record = recordOf(records, dir);
    assert.ok(record, "the digest is kept");
    assert.equal(Deno.readTextFileSync(record).split("\n")[0], first);
    // The kept digest is what a start uses while nothing changed.
    const marked = "0".repeat(64);
    Deno.writeTextFileSync(record, Deno.readTextFileSync(record).replace(first, marked));
    assert.equal(await identityOf(dir), marked);
    // Rewritten at the same size: its change time moves, the modules are hashed again.
    await Deno.writeTextFile(join(dir, "sandbox", "other.ts"), "export const x = 2;\n");
    const second = await identityOf(dir);
    assert.notEqual(second, marked);
    assert.notEqual(second, first);
  } finally {
    if (oldCache === undefined) Deno.env.delete("XDG_CACHE_HOME");
    else Deno.env.set("XDG_CACHE_HOME", oldCache);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("prepareSandboxIdentity() hashes off the thread what sandboxIdentity() hashes on it", async () => {
  const dir = await Deno.makeTempDir();
  const oldCache = Deno.env.get("XDG_CACHE_HOME");
  Deno.env.set("XDG_CACHE_HOME", join(dir, "cache"));
  try {
    await copyTree(dir);
    await new Promise((r) => setTimeout(r, 2100));
    const prepared = await instanceOf(dir);
    await prepared.prepareSandboxIdentity();
    const records = join(dir, "cache", "dvergr", "sandbox-digests");
    const record = recordOf(records, dir);
    const kept = Deno.readTextFileSync(record).split("\n")[0];
    // Hashed again on this thread, without the record: the same digest.
    await Deno.remove(record);
    assert.equal(await identityOf(dir), kept);
    assert.equal(prepared.sandboxIdentity(), kept);
  } finally {
    if (oldCache === undefined) Deno.env.delete("XDG_CACHE_HOME");
    else Deno.env.set("XDG_CACHE_HOME", oldCache);
    await Deno.remove(dir, { recursive: true });
  }
});
