import assert from "node:assert/strict";
import { join } from "node:path";
import { bootSci } from "../engines.ts";
import { encodeJsonLine, readJsonLines } from "../../../sandbox/json_lines.ts";
import { readImage, sciImageStore } from "../../../sandbox/sci_image_cache.ts";
import { createClojurePool } from "../../../sandbox/clojure_pool.ts";
import { toTagged } from "../../../core/edn/tagged.ts";

const INPUT = JSON.stringify(toTagged(new Map()));
const COUNTER = "(ns counter) (def n (atom 0)) " +
  "(defn check [_] {:checks {:first? (= 1 (swap! n inc))} :reward (/ @n 2)})";

Deno.test("JSON lines carry a message's bytes raw after its line, in whatever chunks they arrive", async () => {
  const bytes = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256);
  const wire = new Uint8Array([
    ...encodeJsonLine({ type: "a" }),
    ...encodeJsonLine({ type: "ready", image: bytes, n: 1 }),
    ...encodeJsonLine({ type: "b", image: new Uint8Array(0) }),
  ]);
  for (const size of [1, 7, 4096, wire.byteLength]) {
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < wire.byteLength; i += size) c.enqueue(wire.slice(i, i + size));
        c.close();
      },
    });
    const got: Record<string, unknown>[] = [];
    for await (const m of readJsonLines<Record<string, unknown>>(stream)) got.push(m);
    assert.equal(got.length, 3);
    assert.deepEqual(got[0], { type: "a" });
    assert.equal(got[1].n, 1);
    assert.deepEqual(got[1].image, bytes);
    assert.equal("$binary" in got[1], false);
    assert.deepEqual(got[2].image, new Uint8Array(0));
  }
});

Deno.test("SciEngine restores another engine's boot image: the same base, the same verdicts, state still reset; a foreign image is refused", async () => {
  const a = await bootSci(256 * 1024, { keepImage: true });
  assert.ok(a.engine.image && a.engine.image.byteLength > 1_000_000);
  assert.equal(a.engine.restored, false);
  const b = await bootSci(256 * 1024, { image: a.engine.image });
  assert.equal(b.engine.restored, true);
  assert.equal(b.engine.image, null);
  const call = (e: typeof a.engine) =>
    e.call({ fn: "check", key: "counter", source: COUNTER, input: INPUT, timeoutMs: 30_000 })
      .outcome;
  for (let i = 0; i < 2; i++) {
    assert.deepEqual(call(b.engine), { ok: true, edn: "{:checks {:first? true}, :reward 0.5}" });
  }
  assert.deepEqual(call(a.engine), call(b.engine));
  // A checker loaded by one engine is taken prepared by an engine restored from its image.
  const checker = a.engine.checkerImage("counter")!;
  assert.ok(checker.byteLength < a.engine.image.byteLength / 4);
  const c = await bootSci(256 * 1024, { image: a.engine.image });
  assert.equal(c.engine.install("counter", checker), true);
  const first = c.engine.call({
    fn: "check",
    key: "counter",
    source: COUNTER,
    input: INPUT,
    timeoutMs: 30_000,
  });
  assert.equal(first.loaded, false);
  assert.deepEqual(first.outcome, call(a.engine));
  // Not for another key, not twice, not into an engine that booted SCI itself.
  assert.equal(c.engine.install("other", checker), false);
  assert.equal(c.engine.install("counter", checker), false);
  assert.equal(a.engine.install("x", a.engine.checkerImage("counter")!), false);
  // The image of an engine with a deeper QuickJS stack: the restoring engine's limit holds.
  const deep = await bootSci(4 * 1024 * 1024, { keepImage: true });
  const shallow = await bootSci(256 * 1024, { image: deep.engine.image! });
  assert.equal(shallow.engine.restored, true);
  const recursion = shallow.engine.call({
    fn: "check",
    key: "deep",
    source: "(ns deep) (defn d [n] (if (zero? n) 0 (inc (d (dec n))))) " +
      "(defn check [_] {:checks {} :reward (d 1000000)})",
    input: INPUT,
    timeoutMs: 60_000,
  });
  assert.equal(recursion.poisoned, false);
  assert.equal(recursion.outcome.ok, false);
  assert.match(recursion.outcome.ok ? "" : recursion.outcome.message, /allows 256 KiB/);
  // Bytes that are no image, and an image whose handles lie elsewhere, boot SCI instead.
  const garbage = await bootSci(256 * 1024, { image: new Uint8Array(64) });
  assert.equal(garbage.engine.restored, false);
  const text = new TextDecoder().decode(a.engine.image.subarray(0, 600));
  const moved = a.engine.image.slice();
  const at = text.indexOf('"handles":[') + 11;
  moved[at] = moved[at] === 0x31 ? 0x32 : 0x31;
  const refused = await bootSci(256 * 1024, { image: moved });
  assert.equal(refused.engine.restored, false);
  assert.deepEqual(call(refused.engine), call(a.engine));
});

Deno.test("The boot image store: written whole in a 0700 directory, read back only when its length and SHA-256 hold", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cache = join(dir, "sci");
    const store = sciImageStore(cache)!;
    assert.equal(await store.load(), null);
    const image = Uint8Array.from({ length: 100_000 }, (_, i) => i % 251);
    await store.save(image).written;
    assert.equal((await Deno.stat(cache)).mode! & 0o777, 0o700);
    const [file] = [...Deno.readDirSync(cache)].map((e) => join(cache, e.name));
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
    assert.deepEqual((await store.load())?.image, image);
    const kept = await Deno.readFile(file);
    const flipped = kept.slice();
    flipped[kept.byteLength - 5] ^= 1;
    for (const bad of [kept.subarray(0, kept.byteLength - 1), flipped, new Uint8Array(10)]) {
      await Deno.writeFile(file, bad);
      assert.equal(await readImage(file), null);
    }
    // A bad file is replaced by the next image saved.
    await store.save(image).written;
    assert.deepEqual((await store.load())?.image, image);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createClojurePool(): the first worker keeps SCI's boot image and its checker's image on disk, and the next pool's worker restores both; a corrupt image is booted past and rewritten", async () => {
  const dir = await Deno.makeTempDir();
  const images = join(dir, "sci-images");
  const imageFile = async (suffix: string) => {
    // Written after the worker's ready message: waited for, bounded.
    for (let i = 0; i < 600; i++) {
      try {
        const f = [...Deno.readDirSync(images)].find((e) => e.name.endsWith(suffix));
        if (f) return join(images, f.name);
      } catch {
        // Not there yet.
      }
      await new Promise((ok) => setTimeout(ok, 100));
    }
    throw new Error("no boot image was written");
  };
  const run = async () => {
    const pool = createClojurePool({ workers: 1, imageDir: images });
    try {
      const r = await pool.check(COUNTER, toTagged(new Map()));
      assert.equal(r.ok && r.verdict.reward, 0.5);
      const again = await pool.check(COUNTER, toTagged(new Map()));
      assert.equal(again.ok && again.verdict.reward, 0.5);
      const s = pool.stats();
      return { restored: s.lastBootRestored === true, loaded: s.checkersLoaded };
    } finally {
      pool.close();
    }
  };
  try {
    assert.deepEqual(await run(), { restored: false, loaded: 1 });
    const file = await imageFile(".img");
    await imageFile(".ckimg");
    // Restored, with the checker prepared from its image: nothing loaded.
    assert.deepEqual(await run(), { restored: true, loaded: 0 });
    const bytes = await Deno.readFile(file);
    bytes[bytes.byteLength - 100] ^= 0xff;
    await Deno.writeFile(file, bytes);
    assert.deepEqual(await run(), { restored: false, loaded: 1 });
    // Rewritten by that worker: whole again.
    for (let i = 0; i < 600 && (await readImage(file)) === null; i++) {
      await new Promise((ok) => setTimeout(ok, 100));
    }
    assert.notEqual(await readImage(file), null);
  } finally {
    await removeWhenQuiet(dir);
  }
});

/** Removes `dir`, retrying while the pool's background writes of images finish there. */
async function removeWhenQuiet(dir: string): Promise<void> {
  for (let i = 0;; i++) {
    try {
      return await Deno.remove(dir, { recursive: true });
    } catch (e) {
      if (i >= 100) throw e;
      await new Promise((ok) => setTimeout(ok, 100));
    }
  }
}
