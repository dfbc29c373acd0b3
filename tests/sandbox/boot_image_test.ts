/**
 * The checker.js boot image (sandbox/quickjs_image.ts, sandbox/quickjs_image_cache.ts): a
 * sandbox restored from another's image instead of running the prelude gives the same
 * verdicts, logs, EDN and fixed-seed Math.random, each call from a fresh state; an image
 * that does not fit its module, garbage, or a file whose bytes were changed is refused and
 * the prelude runs; a pool keeps the first worker's image and the next pool's workers
 * (threads and processes, and the worker a command starts early) restore it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { QuickJSSandbox } from "../../sandbox/quickjs_call.ts";
import { describeLayout, freshCopy, type KnownLayout } from "../../sandbox/known_layout.ts";
import { decodeImage, encodeImage } from "../../sandbox/sci_image.ts";
import { claimedId, imageFileBytes, imageOfFile } from "../../sandbox/quickjs_image.ts";
import {
  checkerImageFile,
  imageDir,
  keptImageFile,
  quickjsImageStore,
  readImageFile,
} from "../../sandbox/quickjs_image_cache.ts";
import { checkerKey } from "../../sandbox/worker_pool.ts";
import { sandboxIdentity } from "../../sandbox/load_cache.ts";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import { startEarlyCheckerThread } from "../../cli/early_sandbox.ts";
import type { CheckerInput } from "../../core/checker.ts";
import type { CallRequest, HostMessage, WorkerMessage } from "../../sandbox/protocol.ts";
import { CHECKER_THREAD_ENTRY, newThreadWorker } from "../../sandbox/early_thread.ts";
import { removeSettled } from "../helpers/image_cache.ts";
import { instantiateQuickJS } from "../../sandbox/quickjs_load.ts";
import { DEFAULT_MEMORY_BYTES, STACK_BYTES } from "../../sandbox/pool_types.ts";

/** Runs `fn` with an environment whose XDG_CACHE_HOME is a new directory, and its image dir. */
async function withImageCache(
  fn: (env: (name: string) => string | undefined, dir: string) => Promise<void>,
): Promise<void> {
  const cache = await Deno.makeTempDir();
  try {
    const env = (name: string) => (name === "XDG_CACHE_HOME" ? cache : undefined);
    await fn(env, imageDir(env)!);
  } finally {
    await removeSettled(cache);
  }
}

async function freshModule() {
  const memory = new WebAssembly.Memory({ initial: 256, maximum: 1024 });
  const module = await instantiateQuickJS(memory);
  return { memory, module };
}

type Fresh = Awaited<ReturnType<typeof freshModule>>;

function sandboxIn(
  { memory, module }: Fresh,
  opts: { layout?: KnownLayout; image?: Uint8Array; keepImage?: boolean } = {},
): QuickJSSandbox {
  return new QuickJSSandbox(module, memory, {
    memoryLimitBytes: 56 * 1024 * 1024,
    memoryCapBytes: 64 * 1024 * 1024,
    wasmBytes: () => memory.buffer.byteLength,
    stackBytes: 128 * 1024,
    ...opts,
  });
}

/** A sandbox that ran the prelude and kept its image, and its module's layout. */
async function imageMaker(): Promise<
  { sb: QuickJSSandbox; image: Uint8Array; layout: KnownLayout }
> {
  const fresh = await freshModule();
  const copy = freshCopy(fresh.memory);
  const bytes = fresh.memory.buffer.byteLength;
  const sb = sandboxIn(fresh, { keepImage: true });
  assert.equal(sb.restored, false);
  assert.ok(sb.image, "a sandbox asked to keep its image made one");
  const found = sb.foundLayout!;
  const layout = await describeLayout(copy, bytes, found.layout, found.breakValue);
  assert.ok(layout);
  return { sb, image: sb.image, layout };
}

const SOURCE = `let calls = 0;
export function check(input) {
  calls++;
  console.log("call", calls, Math.random());
  const seen = globalThis.secret;
  globalThis.secret = input.secret;
  const answer = edn.parse(input.files["/out/answer.edn"]);
  return {
    checks: {
      total: answer.total === 42,
      first: calls === 1,
      clean: seen === undefined,
      hidden: !("__dvergrHelpers" in globalThis),
    },
    reward: Math.random(),
    text: edn.stringify({ total: answer.total }),
  };
}`;

const call = (secret: string): CallRequest => ({
  fn: "check",
  key: "k",
  source: SOURCE,
  input: JSON.stringify({ files: { "/out/answer.edn": "{:total 42}" }, secret }),
  timeoutMs: 5_000,
});

Deno.test("a sandbox restored from another's boot image gives the same verdicts, logs, EDN and Math.random, each call fresh", async () => {
  const maker = await imageMaker();
  const restored = sandboxIn(await freshModule(), { layout: maker.layout, image: maker.image });
  assert.equal(restored.restored, true);
  assert.equal(restored.image, null, "a restored sandbox makes no image");
  for (const secret of ["first secret", "second secret"]) {
    const want = maker.sb.call(call(secret));
    const got = restored.call(call(secret));
    assert.ok(got.outcome.ok, JSON.stringify(got.outcome));
    assert.deepEqual(got.outcome, want.outcome);
    assert.deepEqual(got.logs, want.logs);
    const verdict = JSON.parse((got.outcome as { json: string }).json);
    assert.deepEqual(verdict.checks, { total: true, first: true, clean: true, hidden: true });
  }
  // The loop guard came with the image: native loops over forged lengths are refused, or
  // stay interruptible.
  const guarded = (key: string, body: string) => ({
    fn: "check" as const,
    key,
    source: `export function check() { ${body} return { checks: {}, reward: 1 }; }`,
    input: "{}",
    timeoutMs: 300,
  });
  const refused = restored.call(
    guarded("refused", "Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1);"),
  );
  assert.equal(refused.outcome.ok, false);
  assert.match((refused.outcome as { message: string }).message, /indexOf refused a length/);
  const loop = restored.call(
    guarded("loop", "const a = []; const it = a.values(); a.length = 2 ** 32 - 1; new Set(it);"),
  );
  assert.equal((loop.outcome as { fault?: string }).fault, "timeout", JSON.stringify(loop));
});

Deno.test("an image that does not fit the module, or garbage, is refused: the prelude runs and calls answer", async () => {
  const maker = await imageMaker();
  const image = decodeImage(maker.image)!;
  const otherHandles = encodeImage({
    ...image,
    meta: { ...image.meta, handles: image.meta.handles.map((h) => h + 8) },
  });
  const otherGap = encodeImage({
    ...image,
    meta: { ...image.meta, gapEnd: image.meta.gapEnd + 4096 },
  });
  const garbage = new Uint8Array(4096).fill(7);
  for (const bad of [otherHandles, otherGap, garbage, maker.image.subarray(0, 1000)]) {
    const sb = sandboxIn(await freshModule(), { layout: maker.layout, image: bad });
    assert.equal(sb.restored, false);
    const r = sb.call(call("s"));
    assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
  }
});

Deno.test("an image file whose bytes were changed, cut or lengthened is no image", async () => {
  const image = crypto.getRandomValues(new Uint8Array(10_000));
  const file = await imageFileBytes(image);
  assert.deepEqual(await imageOfFile(file), image);
  const flipped = file.slice();
  flipped[file.length - 5000] ^= 1;
  assert.equal(await imageOfFile(flipped), null);
  assert.equal(await imageOfFile(file.subarray(0, file.length - 1)), null);
  const longer = new Uint8Array(file.length + 1);
  longer.set(file);
  assert.equal(await imageOfFile(longer), null);
  const foreign = file.slice();
  foreign[0] ^= 1;
  assert.equal(await imageOfFile(foreign), null);
  assert.equal(await imageOfFile(new Uint8Array(3)), null);
});

const INPUT: CheckerInput = {
  files: { "/out/answer.edn": "{:total 42}" },
  params: {},
  gold: { total: 42 },
  fetched: {},
  judgements: {},
};
const GOOD = `export function check({ files, gold }) {
  const answer = edn.parse(files["/out/answer.edn"]);
  return { checks: { total: answer.total === gold.total }, reward: 1 };
}`;

/** Waits until `file` holds a whole image (the pool writes it after the worker's ready). */
async function imageWritten(file: string): Promise<Uint8Array> {
  for (;;) {
    try {
      const image = await imageOfFile(await Deno.readFile(file));
      if (image) return image;
    } catch {
      // Not there yet.
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** One call in a new pool over the images in `dir`: its verdict and whether it restored. */
async function poolRound(dir: string, kind: "thread" | "process") {
  const pool = createCheckerPool({ workers: 1, workerKind: kind, images: quickjsImageStore(dir) });
  try {
    const run = await pool.check(GOOD, INPUT);
    return { run, restored: pool.stats().lastBootRestored === true };
  } finally {
    pool.close();
  }
}

Deno.test("a pool keeps its first worker's image and the next pools' workers restore it; a changed file is a miss and is replaced", async () => {
  const cache = await Deno.makeTempDir();
  try {
    const dir = imageDir((name) => (name === "XDG_CACHE_HOME" ? cache : undefined))!;
    assert.equal(dir, join(cache, "dvergr", "sandbox-images"));
    const file = join(dir, `${sandboxIdentity()}.img`);
    const first = await poolRound(dir, "thread");
    assert.ok(first.run.ok);
    assert.equal(first.restored, false);
    const kept = await imageWritten(file);
    assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
    for (const kind of ["thread", "process"] as const) {
      const next = await poolRound(dir, kind);
      assert.deepEqual({ ...next.run, ms: 0 }, { ...first.run, ms: 0 }, kind);
      assert.equal(next.restored, true, kind);
    }
    // A file changed on disk (read afresh: another directory): the worker runs the prelude,
    // grades the same, and its own image replaces the file.
    const other = join(cache, "other");
    await Deno.mkdir(other);
    const changed = await Deno.readFile(file);
    changed[changed.length - 100] ^= 0xff;
    const otherFile = join(other, `${sandboxIdentity()}.img`);
    await Deno.writeFile(otherFile, changed);
    const missed = await poolRound(other, "thread");
    assert.ok(missed.run.ok);
    assert.equal(missed.restored, false);
    const replaced = await imageWritten(otherFile);
    assert.equal(replaced.byteLength, kept.byteLength);
    assert.equal((await poolRound(other, "thread")).restored, true);
  } finally {
    await removeSettled(cache);
  }
});

Deno.test("the worker a command starts early is given the kept image, and the pool given the same takes it", async () => {
  await withImageCache(async (env, dir) => {
    await poolRound(dir, "thread");
    await imageWritten(join(dir, `${sandboxIdentity()}.img`));
    const Original = globalThis.Worker;
    let made = 0;
    globalThis.Worker = class extends Original {
      constructor(...args: ConstructorParameters<typeof Worker>) {
        super(...args);
        made++;
      }
    };
    try {
      const early = startEarlyCheckerThread(env);
      assert.equal(early.init?.image, keptImageFile(dir));
      assert.equal(early.init?.keepImage, true);
      const r = await poolRound(dir, "thread");
      assert.ok(r.run.ok);
      assert.equal(r.restored, true);
      assert.equal(made, 1, "the pool started a worker of its own");
    } finally {
      globalThis.Worker = Original;
    }
  });
});

Deno.test("a checker loaded in a restored worker is kept as its image, and the worker a command starts early is sent it: its first call loads nothing", async () => {
  await withImageCache(async (env, dir) => {
    const bootFile = join(dir, `${sandboxIdentity()}.img`);
    await poolRound(dir, "thread");
    await imageWritten(bootFile);
    // A restored worker loads the checker and sends its image back.
    const made = await poolRound(dir, "thread");
    assert.equal(made.restored, true);
    const ckimg = checkerImageFile(dir, claimedId(await Deno.readFile(bootFile)), checkerKey(GOOD));
    await imageWritten(ckimg);
    const early = startEarlyCheckerThread(env, GOOD);
    assert.equal(early.init?.image, keptImageFile(dir));
    const pool = createCheckerPool({
      workers: 1,
      workerKind: "thread",
      images: quickjsImageStore(dir),
    });
    try {
      const run = await pool.check(GOOD, INPUT);
      assert.deepEqual({ ...run, ms: 0 }, { ...made.run, ms: 0 });
      const stats = pool.stats();
      assert.equal(stats.workersStarted, 1);
      assert.equal(stats.lastBootRestored, true);
      assert.equal(stats.checkersLoaded, 0, "the checker was loaded again");
      // Each call still starts from the checker's state right after its load.
      const again = await pool.check(GOOD, INPUT);
      assert.deepEqual({ ...again, ms: 0 }, { ...made.run, ms: 0 });
    } finally {
      pool.close();
    }
  });
});

Deno.test("a sandbox takes a checker image only when it is the checker's, made on its boot image, and calls from it start fresh", async () => {
  const maker = await imageMaker();
  const a = sandboxIn(await freshModule(), { layout: maker.layout, image: maker.image });
  const first = a.call(call("a secret"));
  assert.ok(first.loaded);
  const image = a.checkerImage("k")!;
  assert.ok(image, "a restored sandbox makes checker images");
  assert.equal(maker.sb.checkerImage("k"), null, "a booted one does not: nothing pairs it");
  const b = sandboxIn(await freshModule(), { layout: maker.layout, image: maker.image });
  assert.equal(b.install("other", image), false, "another checker's key");
  assert.equal(b.install("k", new Uint8Array(100)), false, "garbage");
  assert.equal(b.install("k", image.subarray(0, image.length - 4096)), false, "cut");
  assert.equal(maker.sb.install("k", image), false, "a sandbox that ran the prelude");
  const { memory, module } = await freshModule();
  const otherLimits = new QuickJSSandbox(module, memory, {
    memoryLimitBytes: 40 * 1024 * 1024,
    memoryCapBytes: 64 * 1024 * 1024,
    wasmBytes: () => memory.buffer.byteLength,
    stackBytes: 128 * 1024,
    layout: maker.layout,
    image: maker.image,
  });
  assert.equal(otherLimits.restored, true);
  assert.equal(otherLimits.install("k", image), false, "other limits");
  assert.equal(b.install("k", image), true);
  for (const secret of ["b secret", "another"]) {
    const r = b.call(call(secret));
    assert.equal(r.loaded, false, "the checker was loaded again");
    assert.deepEqual(r.outcome, first.outcome);
    assert.deepEqual(r.logs, first.logs);
  }
});

Deno.test("an image file larger than any image is not read", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "big.img");
    const f = await Deno.open(file, { write: true, create: true });
    await f.truncate(64 * 1024 * 1024);
    f.close();
    assert.equal(readImageFile(file), null);
    assert.equal(readImageFile(join(dir, "missing.img")), null);
    await Deno.writeFile(file, new Uint8Array([1, 2, 3]));
    assert.deepEqual(readImageFile(file), new Uint8Array([1, 2, 3]));
  } finally {
    await removeSettled(dir);
  }
});

/**
 * What a checker.js thread worker answers to `messages` (an init, a checker image, calls),
 * all posted at once: its "ready" and its results, in order.
 */
async function workerAnswers(messages: HostMessage[]): Promise<WorkerMessage[]> {
  const worker = newThreadWorker(CHECKER_THREAD_ENTRY);
  const calls = messages.filter((m) => m.type === "call").length;
  try {
    return await new Promise<WorkerMessage[]>((resolve, reject) => {
      const got: WorkerMessage[] = [];
      worker.onmessage = (e: MessageEvent<WorkerMessage>) => {
        got.push(e.data);
        if (e.data.type === "init-failed") reject(new Error(e.data.message));
        if (got.filter((m) => m.type === "result").length === calls) resolve(got);
      };
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new Error(e.message));
      };
      for (const m of messages) worker.postMessage(m);
    });
  } finally {
    worker.terminate();
  }
}

Deno.test("a worker checks the boot and checker images it is sent while it starts: whole ones are taken, changed ones are none, and messages keep their order", async () => {
  await withImageCache(async (_env, dir) => {
    const bootFile = join(dir, `${sandboxIdentity()}.img`);
    await poolRound(dir, "thread");
    await imageWritten(bootFile);
    // A restored worker loads the checker and sends its image back.
    await poolRound(dir, "thread");
    const boot = await Deno.readFile(bootFile);
    const key = checkerKey(GOOD);
    const ckimg = checkerImageFile(dir, claimedId(boot), key);
    await imageWritten(ckimg);
    const checker = await Deno.readFile(ckimg);
    const changed = (bytes: Uint8Array) => {
      const c = bytes.slice();
      c[c.length - 64] ^= 0xff;
      return c;
    };
    // The pool's limits: a checker image holds those of the worker that made it.
    const init = {
      type: "init",
      memoryBytes: DEFAULT_MEMORY_BYTES,
      stackBytes: STACK_BYTES,
    } as const;
    const callOf = (id: number): HostMessage => ({
      type: "call",
      id,
      fn: "check",
      key,
      source: GOOD,
      input: JSON.stringify(INPUT),
      timeoutMs: 5_000,
    });
    const rounds = [
      { image: boot, checker, restored: true, loaded: false },
      { image: boot, checker: changed(checker), restored: true, loaded: true },
      { image: changed(boot), checker, restored: false, loaded: true },
    ];
    for (const [i, r] of rounds.entries()) {
      const got = await workerAnswers([
        { ...init, image: r.image },
        { type: "prepared", key, image: r.checker },
        callOf(1),
        callOf(2),
      ]);
      assert.deepEqual(got.map((m) => m.type), ["ready", "result", "result"], `round ${i}`);
      const [ready, first, second] = got;
      assert.equal(ready.type === "ready" && ready.restored === true, r.restored, `round ${i}`);
      assert.ok(first.type === "result" && second.type === "result");
      assert.deepEqual([first.id, second.id], [1, 2], `round ${i}`);
      assert.equal(first.loaded, r.loaded, `round ${i}: the checker was loaded`);
      assert.equal(second.loaded, false, `round ${i}`);
      for (const m of [first, second]) {
        assert.ok(m.outcome.ok, `round ${i}`);
        assert.deepEqual(JSON.parse(m.outcome.json), { checks: { total: true }, reward: 1 });
      }
    }
  });
});
