import assert from "node:assert/strict";
import { createCheckerPool, sharedCheckerPool } from "../../sandbox/checker_pool.ts";
import type { CheckerInput, CheckerRun } from "../../core/checker.ts";

const INPUT: CheckerInput = {
  files: { "/out/answer.edn": '{:total 4210 :account "1200" :tags [:a :b]}' },
  params: { tolerance: 0.5 },
  gold: { total: 4210, account: "1200" },
  fetched: {},
  judgements: {},
};

/** A checker that compares the EDN answer with the gold, field by field. */
const EDN_CHECKER = `
export function check({ files, gold }) {
  const answer = edn.parse(files["/out/answer.edn"], "answer.edn");
  const checks = {};
  for (const key of Object.keys(gold)) checks[key] = answer[key] === gold[key];
  const right = Object.values(checks).filter(Boolean).length;
  return { checks, reward: right / Object.keys(checks).length };
}`;

function verdictOf(run: CheckerRun) {
  assert.equal(run.ok, true, run.ok ? "" : `${run.fault}: ${run.message}`);
  return run.ok ? run.verdict : undefined;
}

Deno.test("check() gives the verdict a checker computes from its input", async () => {
  const pool = createCheckerPool({ workers: 1 });
  try {
    const run = await pool.check(
      `export function check(input) {
        const ok = input.params.tolerance === 0.5 && input.gold.total === 4210;
        return { checks: { "params-seen": ok, "no-fetch": Object.keys(input.fetched).length === 0 },
                 reward: ok ? 1 : 0, note: "extra keys are dropped" };
      }`,
      INPUT,
    );
    assert.deepEqual(verdictOf(run), {
      checks: { "params-seen": true, "no-fetch": true },
      reward: 1,
    });
    assert.equal(typeof run.ms, "number");
    assert.ok(run.ms >= 0);
  } finally {
    pool.close();
  }
});

Deno.test("check() reads EDN answers with the sandbox's global edn.parse", async () => {
  const pool = createCheckerPool({ workers: 1 });
  try {
    const right = await pool.check(EDN_CHECKER, INPUT);
    assert.deepEqual(verdictOf(right), { checks: { total: true, account: true }, reward: 1 });

    const wrong = await pool.check(EDN_CHECKER, {
      ...INPUT,
      files: { "/out/answer.edn": '{:total 4211 :account "1200"}' },
    });
    assert.deepEqual(verdictOf(wrong), { checks: { total: false, account: true }, reward: 0.5 });

    const shapes = await pool.check(
      `export function check({ files }) {
        const a = edn.parse(files["/out/answer.edn"]);
        return { checks: { keywordsAreStrings: a.tags[0] === "a" && a.tags[1] === "b",
                           vector: Array.isArray(a.tags) }, reward: 1 };
      }`,
      INPUT,
    );
    assert.deepEqual(verdictOf(shapes)?.checks, { keywordsAreStrings: true, vector: true });

    const broken = await pool.check(EDN_CHECKER, {
      ...INPUT,
      files: { "/out/answer.edn": "{:total 4210\n :account" },
    });
    assert.equal(broken.ok, false);
    if (!broken.ok) {
      assert.equal(broken.fault, "threw");
      assert.match(broken.message, /EdnSyntaxError: answer\.edn line 2/);
      assert.match(broken.message, /checker\.js line 3/);
    }
  } finally {
    pool.close();
  }
});

Deno.test("check() settles an async checker and one with top-level await", async () => {
  const pool = createCheckerPool({ workers: 1 });
  try {
    const asyncRun = await pool.check(
      `async function field(gold, key) { await null; return gold[key]; }
       export async function check({ gold }) {
         const [total, account] = await Promise.all([field(gold, "total"), field(gold, "account")]);
         return { checks: { total: total === 4210, account: account === "1200" }, reward: 0.25 };
       }`,
      INPUT,
    );
    assert.deepEqual(verdictOf(asyncRun), { checks: { total: true, account: true }, reward: 0.25 });

    const topLevel = await pool.check(
      `const ready = await Promise.resolve(0.75);
       export function check() { return { checks: {}, reward: ready }; }`,
      INPUT,
    );
    assert.deepEqual(verdictOf(topLevel), { checks: {}, reward: 0.75 });

    const rejected = await pool.check(
      `export async function check() { await null; throw new TypeError("no answer file"); }`,
      INPUT,
    );
    assert.equal(rejected.ok, false);
    if (!rejected.ok) {
      assert.equal(rejected.fault, "threw");
      assert.match(rejected.message, /^The checker threw TypeError: no answer file/);
    }
  } finally {
    pool.close();
  }
});

Deno.test("judgeRequests() returns the requests, none without the export or for null", async () => {
  const pool = createCheckerPool({ workers: 1 });
  const { judgements: _, ...input } = INPUT;
  try {
    const asked = await pool.judgeRequests(
      `export function check() { return { checks: {}, reward: 1 }; }
       export function judgeRequests({ files }) {
         return [{ id: "polite", prompt: "Is this polite? " + files["/out/answer.edn"], extra: 1 }];
       }`,
      input,
    );
    assert.deepEqual(asked.ok && asked.requests, [
      { id: "polite", prompt: `Is this polite? ${INPUT.files["/out/answer.edn"]}` },
    ]);

    const none = await pool.judgeRequests(`export function check() {}`, input);
    assert.deepEqual(none.ok && none.requests, []);

    const nullRun = await pool.judgeRequests(
      `export function check() {} export function judgeRequests() { return null; }`,
      input,
    );
    assert.deepEqual(nullRun.ok && nullRun.requests, []);

    const bad = await pool.judgeRequests(
      `export function check() {} export function judgeRequests() { return [{ id: 3 }]; }`,
      input,
    );
    assert.deepEqual(bad.ok ? bad : { fault: bad.fault, message: bad.message }, {
      fault: "invalid-verdict",
      message:
        "judgeRequests returned no requests: 0.id: expected a string, got 3; 0.prompt: expected a string, got nothing",
    });

    const notFn = await pool.judgeRequests(
      `export function check() {} export const judgeRequests = [];`,
      input,
    );
    assert.equal(!notFn.ok && notFn.fault, "no-check");
  } finally {
    pool.close();
  }
});

Deno.test("check() keeps no state between calls on the same worker", async () => {
  const pool = createCheckerPool({ workers: 1 });
  const source = `
    let calls = 0;
    export function check() {
      calls++;
      const seen = { global: typeof globalThis.leftBehind, proto: typeof ({}).polluted,
                     arrayProto: typeof [].sneaky, calls };
      globalThis.leftBehind = 1;
      Object.prototype.polluted = "yes";
      Array.prototype.sneaky = () => 1;
      JSON.parse = () => ({ checks: {}, reward: 1 });
      console.log(JSON.stringify(seen));
      return { checks: { fresh: seen.global === "undefined" && seen.proto === "undefined" &&
                                seen.arrayProto === "undefined" && seen.calls === 1 }, reward: 1 };
    }`;
  try {
    for (let i = 0; i < 3; i++) {
      const run = await pool.check(source, INPUT);
      assert.deepEqual(verdictOf(run)?.checks, { fresh: true }, JSON.stringify(run.logs));
    }
    assert.equal(pool.stats().workersStarted, 1);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  } finally {
    pool.close();
  }
});

Deno.test("check() returns console output as bounded logs", async () => {
  const pool = createCheckerPool({ workers: 1 });
  try {
    const run = await pool.check(
      `export function check() {
        console.log("answer", { a: 1 }, [2], null);
        console.warn("x".repeat(5000));
        for (let i = 0; i < 500; i++) console.info(i);
        return { checks: {}, reward: 1 };
      }`,
      INPUT,
    );
    assert.equal(run.ok, true);
    assert.equal(run.logs?.[0], 'answer {"a":1} [2] null');
    assert.equal(run.logs?.[1].length, 2000);
    assert.equal(run.logs?.length, 100);
    const quiet = await pool.check(
      `export function check() { return { checks: {}, reward: 1 }; }`,
      INPUT,
    );
    assert.equal(quiet.logs, undefined);
  } finally {
    pool.close();
  }
});

Deno.test("check() gives Math.random the same sequence in every call", async () => {
  const pool = createCheckerPool({ workers: 1 });
  const source = `export function check() {
    console.log([Math.random(), Math.random(), Math.random()].join(","));
    return { checks: { now: Math.abs(Date.now() - new Date().getTime()) < 60000 }, reward: Math.random() };
  }`;
  try {
    const a = await pool.check(source, INPUT);
    const b = await pool.check(source, INPUT);
    assert.equal(a.ok && b.ok, true);
    assert.deepEqual(a.logs, b.logs);
    assert.deepEqual(verdictOf(a), verdictOf(b));
    const draws = a.logs![0].split(",").map(Number);
    assert.equal(new Set(draws).size, 3);
    for (const d of draws) assert.ok(d >= 0 && d < 1);
  } finally {
    pool.close();
  }
});

Deno.test("check() gives every one of many concurrent calls its own verdict", async () => {
  const pool = createCheckerPool({ workers: 2 });
  const source = `export function check({ params }) {
    let sum = 0;
    for (let i = 0; i < params.n * 1000; i++) sum += i % 7;
    return { checks: { even: params.n % 2 === 0 }, reward: params.n / 200, sum };
  }`;
  try {
    const runs = await Promise.all(
      Array.from({ length: 200 }, (_, n) => pool.check(source, { ...INPUT, params: { n } })),
    );
    runs.forEach((run, n) => {
      assert.deepEqual(verdictOf(run), { checks: { even: n % 2 === 0 }, reward: n / 200 });
    });
    const stats = pool.stats();
    // How many workers the burst warrants depends on the machine's speed: never more than 2
    // at once. Those that started on the baseline compiler are replaced once the calls have
    // earned tier-up (these loops do on a slow machine): at most 2 more.
    assert.ok(stats.workersPeak >= 1 && stats.workersPeak <= 2, `${stats.workersPeak}`);
    assert.ok(stats.workersStarted <= (stats.optimizing ? 4 : 2), `${stats.workersStarted}`);
    assert.equal(stats.workersReplaced, 0);
    assert.equal(stats.callsQueued, 0);
  } finally {
    pool.close();
  }
});

Deno.test("check() replaces a worker that does not answer by its deadline", async () => {
  // Each indexOf over 40 MB runs in native code that never polls the interrupt handler, and
  // QuickJS polls it once per 10,000 iterations: only the host-side watchdog ends the call.
  const pool = createCheckerPool({ workers: 1, hangMarginMs: 50 });
  try {
    assert.equal(verdictOf(await pool.check(EDN_CHECKER, INPUT))?.reward, 1);
    const hung = await pool.check(
      `export function check() {
        const s = "a".repeat(40e6);
        let n = 0;
        for (;;) n += s.indexOf("b");
      }`,
      INPUT,
      { timeoutMs: 1000 },
    );
    assert.deepEqual(hung.ok ? hung : { fault: hung.fault, message: hung.message }, {
      fault: "timeout",
      message: "The checker did not finish within 1000ms",
    });
    assert.ok(hung.ms >= 1000 && hung.ms < 10_000, `${hung.ms}ms`);
    const stats = pool.stats();
    assert.equal(stats.workersReplaced, 1);
    assert.equal(stats.workersAbandoned, 1);
    const next = await pool.check(EDN_CHECKER, INPUT);
    assert.equal(verdictOf(next)?.reward, 1);
  } finally {
    pool.close();
  }
});

Deno.test("check() gives a call behind a quicker one's deadline its own whole time limit", async () => {
  // The first call's short limit arms the worker's watchdog early; the second call, with a
  // longer limit, is abandoned at its own deadline, not at the first call's.
  const pool = createCheckerPool({ workers: 1, hangMarginMs: 50 });
  try {
    const quick = await pool.check(EDN_CHECKER, INPUT, { timeoutMs: 100 });
    assert.equal(verdictOf(quick)?.reward, 1);
    const hung = await pool.check(`export function check() { for (;;) {} }`, INPUT, {
      timeoutMs: 1000,
    });
    assert.equal(!hung.ok && hung.message, "The checker did not finish within 1000ms");
    assert.ok(hung.ms >= 1000, `${hung.ms}ms`);
  } finally {
    pool.close();
  }
});

Deno.test("check() honours the pool's default time limit and a call's own", async () => {
  const pool = createCheckerPool({ workers: 1, defaultTimeoutMs: 150 });
  const loop = `export function check() { for (;;) {} }`;
  try {
    const byDefault = await pool.check(loop, INPUT);
    assert.equal(!byDefault.ok && byDefault.message, "The checker did not finish within 150ms");
    const own = await pool.check(loop, INPUT, { timeoutMs: 60 });
    assert.equal(!own.ok && own.message, "The checker did not finish within 60ms");
    assert.ok(own.ms < 1000);
    assert.equal(pool.stats().workersReplaced, 0);
  } finally {
    pool.close();
  }
});

Deno.test("check() caps memory at the pool's memoryBytes", async () => {
  const pool = createCheckerPool({ workers: 1, memoryBytes: 48 * 1024 * 1024 });
  try {
    const run = await pool.check(
      `export function check() { const a = []; for (;;) a.push({ n: a.length, s: "x" + a.length }); }`,
      INPUT,
    );
    assert.equal(!run.ok && run.fault, "memory");
    assert.match(
      !run.ok ? run.message : "",
      /^The checker ran out of memory \(the sandbox allows 48 MiB/,
    );
    const big = await pool.check(EDN_CHECKER, {
      ...INPUT,
      params: { blob: "x".repeat(20_000_000) },
    });
    assert.equal(!big.ok && big.fault, "memory");
    assert.match(!big.ok ? big.message : "", /^The checker's input is too large for the sandbox/);
    assert.equal(verdictOf(await pool.check(EDN_CHECKER, INPUT))?.reward, 1);
  } finally {
    pool.close();
  }
});

Deno.test("check() gives a verdict to a call that waited behind one that poisoned its worker", async () => {
  const pool = createCheckerPool({ workers: 1, memoryBytes: 48 * 1024 * 1024 });
  const checker = `export function check({ params }) {
    if (params.grow) { const a = []; for (;;) a.push(new Array(100000).fill(a.length)); }
    return { checks: { ok: true }, reward: 1 };
  }`;
  try {
    // Sent together, the second waits in the worker's input behind the first (pipelining);
    // running out of memory poisons the worker, which is replaced. It used to hang forever.
    const [grown, waited] = await Promise.all([
      pool.check(checker, { ...INPUT, params: { grow: true } }),
      pool.check(checker, INPUT),
    ]);
    assert.equal(!grown.ok && grown.fault, "memory");
    assert.equal(verdictOf(waited)?.reward, 1);
    assert.equal(pool.stats().workersReplaced, 1);
  } finally {
    pool.close();
  }
});

Deno.test("close() resolves queued and later calls to faults instead of throwing", async () => {
  const pool = createCheckerPool({ workers: 1 });
  const pending = [
    pool.check(`export function check() { for (;;) {} }`, INPUT, { timeoutMs: 5000 }),
    pool.check(EDN_CHECKER, INPUT),
  ];
  await new Promise((r) => setTimeout(r, 300));
  pool.close();
  const [running, queued] = await Promise.all(pending);
  assert.equal(!running.ok && running.fault, "crashed");
  assert.equal(!queued.ok && queued.fault, "crashed");
  const after = await pool.check(EDN_CHECKER, INPUT);
  assert.deepEqual(after.ok ? after : { fault: after.fault, message: after.message }, {
    fault: "crashed",
    message: "The checker could not run: its pool is closed",
  });
  assert.equal(pool.stats().workersAlive, 0);
});

Deno.test("createCheckerPool() runs checkers in workers that hold no Deno permission", async () => {
  const pool = createCheckerPool({ workers: 1 });
  try {
    await pool.check(EDN_CHECKER, INPUT);
    const permissions = pool.stats().workerPermissions!;
    for (const name of ["read", "write", "net", "env", "run", "ffi", "sys", "import"]) {
      assert.notEqual(permissions[name], "granted", `${name}: ${permissions[name]}`);
    }
    assert.equal((await Deno.permissions.query({ name: "read" })).state, "granted");
  } finally {
    pool.close();
  }
});

Deno.test("sharedCheckerPool() is one pool until closed, then a new one", async () => {
  const pool = sharedCheckerPool();
  assert.equal(sharedCheckerPool(), pool);
  try {
    assert.equal(verdictOf(await pool.check(EDN_CHECKER, INPUT))?.reward, 1);
  } finally {
    pool.close();
  }
  const next = sharedCheckerPool();
  assert.notEqual(next, pool);
  next.close();
  assert.equal(next.stats().workersStarted, 0);
});

Deno.test("createCheckerPool() with thread workers gives the same verdicts, isolation and faults", async () => {
  const pool = createCheckerPool({ workers: 1, workerKind: "thread" });
  try {
    assert.equal(verdictOf(await pool.check(EDN_CHECKER, INPUT))?.reward, 1);
    const leaky = `let n = 0; export function check() {
      n++; globalThis.seen = (globalThis.seen ?? 0) + 1;
      return { checks: { fresh: n === 1 && globalThis.seen === 1 }, reward: 1 }; }`;
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(verdictOf(await pool.check(leaky, INPUT))?.checks, { fresh: true });
    }
    const loop = await pool.check("export function check() { for (;;) {} }", INPUT, {
      timeoutMs: 100,
    });
    assert.equal(!loop.ok && loop.fault, "timeout");
    const stats = pool.stats();
    assert.equal(stats.workerKind, "thread");
    assert.deepEqual(stats.workerPids, []);
    assert.equal(stats.workersStarted, 1);
  } finally {
    pool.close();
  }
});

Deno.test("createCheckerPool() grows on demand: calls that never wait stay on one worker, a burst grows within the maximum, slow calls get parallel ones", async () => {
  const pool = createCheckerPool({ workers: 4 });
  try {
    const quick = `export function check({ params }) {
      return { checks: { seen: params.n >= 0 }, reward: 1 };
    }`;
    // One call at a time: none ever waits, so the pool never grows, however slow the machine.
    for (let n = 0; n < 30; n++) {
      assert.ok((await pool.check(quick, { ...INPUT, params: { n } })).ok);
    }
    assert.equal(pool.stats().workersPeak, 1);
    // A burst: whether waiting quick calls warrant another worker depends on how fast calls
    // and starts are here (a loaded machine stalls both), so only the maximum is asserted.
    const runs = await Promise.all(
      Array.from({ length: 300 }, (_, n) => pool.check(quick, { ...INPUT, params: { n } })),
    );
    assert.ok(runs.every((r) => r.ok));
    assert.ok(pool.stats().workersPeak <= 4);

    const slow = `export function check() {
      const end = Date.now() + 300;
      while (Date.now() < end) {}
      return { checks: {}, reward: 1 };
    }`;
    const slowPool = createCheckerPool({ workers: 4 });
    try {
      const slowRuns = await Promise.all(
        Array.from({ length: 12 }, () => slowPool.check(slow, INPUT)),
      );
      assert.ok(slowRuns.every((r) => r.ok));
      const afterSlow = slowPool.stats();
      // 3.6 s of work waiting: more workers start (how many depends on how fast they start).
      assert.ok(afterSlow.workersPeak >= 2, `slow calls ran on ${afterSlow.workersPeak} workers`);
      assert.ok(afterSlow.workersPeak <= 4);
      assert.equal(afterSlow.workersReplaced, 0);
    } finally {
      slowPool.close();
    }
  } finally {
    pool.close();
  }
});

Deno.test("warm() starts one worker before any call, and the first call runs on it", async () => {
  const pool = createCheckerPool({ workers: 2 });
  try {
    pool.warm("checker.js");
    pool.warm("checker.js");
    assert.equal(pool.stats().workersStarted, 1);
    assert.equal(pool.stats().clojure, undefined, "no Clojure worker for checker.js");
    verdictOf(await pool.check(EDN_CHECKER, INPUT));
    assert.equal(pool.stats().workersStarted, 1);
    assert.equal(pool.stats().calls, 1);
  } finally {
    pool.close();
  }
});

Deno.test("warm() for checker.clj starts a Clojure worker and no checker.js worker", async () => {
  const pool = createCheckerPool({ workers: 2 });
  try {
    pool.warm("checker.clj");
    // The Clojure pool is made once its module has loaded (sandbox/checker_pool.ts).
    for (let turn = 0; turn < 10_000 && !pool.stats().clojure; turn++) {
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    assert.equal(pool.stats().workersStarted, 0);
    assert.equal(pool.stats().clojure?.workersStarted, 1);
  } finally {
    pool.close();
  }
});

Deno.test("process workers start on the baseline compiler and start with tier-up once calls run long enough to earn it", async () => {
  const pool = createCheckerPool({ workers: 1, workerKind: "process" });
  const quick = `export function check({ params }) {
    return { checks: { seen: params.n >= 0 }, reward: 1 };
  }`;
  // ~40 ms or more a call on any machine: once 8 in a row have, each spends ~38 ms of
  // BASELINE_BUDGET_MS (100), so the tenth earns tier-up.
  const long = `export function check({ params }) {
    const end = Date.now() + 40;
    let n = 0;
    while (Date.now() < end) n++;
    return { checks: { counted: n > 0 }, reward: params.n / 20 };
  }`;
  try {
    for (let n = 0; n < 20; n++) {
      assert.ok((await pool.check(quick, { ...INPUT, params: { n } })).ok);
    }
    const light = pool.stats();
    assert.equal(light.baselineWorkers, 1);
    assert.equal(light.optimizing, false);
    assert.equal(light.workersStarted, 1);
    // Calls queued behind the one that earned tier-up go to its replacement, each answered once.
    const runs = await Promise.all(
      Array.from({ length: 12 }, (_, n) => pool.check(long, { ...INPUT, params: { n } })),
    );
    runs.forEach((run, n) =>
      assert.deepEqual(verdictOf(run), { checks: { counted: true }, reward: n / 20 })
    );
    const heavy = pool.stats();
    assert.equal(heavy.optimizing, true);
    assert.equal(heavy.baselineWorkers, 0);
    assert.equal(heavy.workersAlive, 1);
    assert.equal(heavy.workersStarted, 2);
    assert.equal(heavy.workersReplaced, 0);
    assert.ok((await pool.check(quick, { ...INPUT, params: { n: 1 } })).ok);
    assert.equal(pool.stats().workersStarted, 2);
  } finally {
    pool.close();
  }
});

Deno.test("a busy host that reads quick answers late does not make its workers optimize", async () => {
  const pool = createCheckerPool({ workers: 1, workerKind: "process" });
  try {
    assert.ok((await pool.check(EDN_CHECKER, INPUT)).ok);
    for (let round = 0; round < 6; round++) {
      const calls = Array.from({ length: 4 }, () => pool.check(EDN_CHECKER, INPUT));
      // The answers come while this thread is busy: the host sees each call take 30 ms+.
      const until = performance.now() + 30;
      while (performance.now() < until) { /* busy */ }
      assert.ok((await Promise.all(calls)).every((r) => r.ok));
    }
    assert.equal(pool.stats().optimizing, false);
    assert.equal(pool.stats().baselineWorkers, 1);
  } finally {
    pool.close();
  }
});

Deno.test("a quick checker whose calls are slow now and then (a loaded machine's pauses) stays on the baseline", async () => {
  const pool = createCheckerPool({ workers: 1, workerKind: "process" });
  // Every fourth call runs ~40 ms, as a quick call paused by the machine would.
  const sometimes = `export function check({ params }) {
    const end = Date.now() + (params.n % 4 === 0 ? 40 : 0);
    while (Date.now() < end) {}
    return { checks: {}, reward: 1 };
  }`;
  try {
    for (let n = 0; n < 40; n++) {
      assert.ok((await pool.check(sometimes, { ...INPUT, params: { n } })).ok);
    }
    assert.equal(pool.stats().optimizing, false);
    assert.equal(pool.stats().workersStarted, 1);
  } finally {
    pool.close();
  }
});

Deno.test("one call that runs a quarter of a second makes workers optimize at once: a timed-out call's retry runs on one", async () => {
  const pool = createCheckerPool({ workers: 1, workerKind: "process" });
  const loop = `export function check() { for (;;) {} }`;
  try {
    assert.ok((await pool.check(EDN_CHECKER, INPUT)).ok);
    assert.equal(pool.stats().optimizing, false);
    const timedOut = await pool.check(loop, INPUT, { timeoutMs: 300 });
    assert.equal(!timedOut.ok && timedOut.fault, "timeout");
    assert.equal(pool.stats().optimizing, true);
    assert.ok((await pool.check(EDN_CHECKER, INPUT)).ok);
    assert.equal(pool.stats().baselineWorkers, 0);
    assert.equal(pool.stats().workersStarted, 2);
  } finally {
    pool.close();
  }
});

Deno.test("thread workers share the host's V8: none is a baseline worker", async () => {
  const pool = createCheckerPool({ workers: 1, workerKind: "thread" });
  try {
    assert.ok((await pool.check(EDN_CHECKER, INPUT)).ok);
    assert.equal(pool.stats().baselineWorkers, 0);
    assert.equal(pool.stats().optimizing, true);
  } finally {
    pool.close();
  }
});
