/**
 * sandbox/load_cache.ts sandboxIdentity(): the digest of the sandbox modules is kept with a
 * fingerprint of their stats and used while they are unchanged; a module rewritten, even at
 * the same size, gets a new identity. Runs a copy of the module in a directory of its own.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { staticGraph } from "../helpers/static_graph.ts";

const ROOT = new URL("../../", import.meta.url);

/**
 * A tree holding load_cache.ts, the modules it imports (found in its module graph, so a new
 * import needs no edit here), another module and deno.json.
 */
async function copyTree(dir: string): Promise<void> {
  const modules = [...await staticGraph(new URL("sandbox/load_cache.ts", ROOT))]
    .filter((s) => s.startsWith(ROOT.href))
    .map((s) => s.slice(ROOT.href.length));
  assert.ok(modules.includes("sandbox/load_cache.ts"));
  for (const f of modules) {
    await Deno.mkdir(join(dir, dirname(f)), { recursive: true });
    await Deno.copyFile(new URL(f, ROOT), join(dir, f));
  }
  await Deno.writeTextFile(join(dir, "sandbox", "other.ts"), "export const x = 1;\n");
  await Deno.writeTextFile(join(dir, "deno.json"), "{}\n");
}

/** The one digest record kept in the copy's own cache. */
function recordOf(dir: string): string {
  const records = join(dir, "cache", "dvergr", "sandbox-digests");
  const all = [...Deno.readDirSync(records)].map((e) => join(records, e.name));
  assert.equal(all.length, 1, "one digest kept for the copy's modules");
  return all[0];
}

/**
 * The copy's sandboxIdentity() in a process of its own, whose cache is `dir`/cache: a test
 * module shares its process, and so its environment, with others, whose starts would keep
 * their digests in a cache set here (and write into the directory while it is removed).
 * With `prepare`, after prepareSandboxIdentity().
 */
async function identityOf(dir: string, prepare = false): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      "--no-config",
      `const m = await import(${JSON.stringify(`file://${dir}/sandbox/load_cache.ts`)});` +
      (prepare ? "await m.prepareSandboxIdentity();" : "") +
      "console.log(m.sandboxIdentity());",
    ],
    env: { XDG_CACHE_HOME: join(dir, "cache") },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test("sandboxIdentity() keeps its digest while the modules are unchanged, and not after", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await copyTree(dir);
    // Files written in the last 2 s may still be written to: their digest is not kept yet.
    await new Promise((r) => setTimeout(r, 2100));
    const first = await identityOf(dir);
    const record = recordOf(dir);
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
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("prepareSandboxIdentity() hashes off the thread what sandboxIdentity() hashes on it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await copyTree(dir);
    await new Promise((r) => setTimeout(r, 2100));
    const prepared = await identityOf(dir, true);
    const record = recordOf(dir);
    const kept = Deno.readTextFileSync(record).split("\n")[0];
    assert.equal(prepared, kept);
    // Hashed again on the main thread, without the record: the same digest.
    await Deno.remove(record);
    assert.equal(await identityOf(dir), kept);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
