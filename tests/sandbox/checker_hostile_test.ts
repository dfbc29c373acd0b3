/**
 * Hostile checkers: each must end as a fault value with the right kind and reason, and
 * the same pool must answer a normal call correctly right after it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import type { CheckerFault, CheckerInput } from "../../core/checker.ts";

const INPUT: CheckerInput = {
  files: { "/out/answer.edn": "{:total 42}" },
  params: { expected: 42 },
  gold: { total: 42 },
  fetched: {},
  judgements: {},
};

const NORMAL = `export function check({ files, gold }) {
  const answer = edn.parse(files["/out/answer.edn"]);
  return { checks: { total: answer.total === gold.total, clean: ({}).polluted === undefined },
           reward: answer.total === gold.total ? 1 : 0 };
}`;

interface Hostile {
  name: string;
  source: string;
  fault: CheckerFault;
  message: RegExp;
  timeoutMs?: number;
}

const check = (body: string) => `export function check(input) {\n${body}\n}`;

const HOSTILE: Hostile[] = [
  {
    name: "an infinite loop",
    source: check("for (;;) {}"),
    fault: "timeout",
    message: /^The checker did not finish within 200ms$/,
  },
  {
    name: "an infinite loop in a getter of the returned verdict",
    source: check("return { checks: {}, get reward() { for (;;) {} } };"),
    fault: "timeout",
    message: /^The checker did not finish within 200ms$/,
  },
  {
    name: "while(true) inside catch and finally that try to swallow the interrupt",
    source: check(
      "for (;;) { try { for (;;) {} } catch (e) { for (;;) {} } finally { for (;;) {} } }",
    ),
    fault: "timeout",
    message: /^The checker did not finish within 200ms$/,
  },
  {
    name: "a microtask flood",
    source: check("const spin = () => Promise.resolve().then(spin); return spin();"),
    fault: "timeout",
    message: /^The checker did not finish within 200ms$/,
  },
  {
    name: "a promise that never settles",
    source: check("return new Promise(() => {});"),
    fault: "timeout",
    message: /^The checker returned a promise that never settles/,
  },
  {
    name: "deep recursion",
    source: check("const down = (n) => down(n + 1) + 1; return down(0);"),
    fault: "memory",
    message: /^The checker overflowed its stack \(the sandbox allows 128 KiB.*checker\.js line 2/,
  },
  {
    name: "nesting deep enough to overflow the host stack inside QuickJS",
    source: check("return (0, eval)('['.repeat(100000) + ']'.repeat(100000));"),
    fault: "crashed",
    message:
      /^The sandbox crashed while running the checker: RangeError: Maximum call stack size exceeded/,
  },
  {
    name: "a memory bomb by array growth",
    source: check("const a = []; for (;;) a.push([a.length, String(a.length)]);"),
    fault: "memory",
    message: /^The checker ran out of memory \(the sandbox allows 64 MiB/,
    timeoutMs: 10_000,
  },
  {
    name: "a memory bomb by string doubling",
    source: check("let s = 'x'; for (;;) s = s + s;"),
    fault: "memory",
    message: /^The checker ran out of memory/,
    timeoutMs: 10_000,
  },
  {
    name: "a huge verdict",
    source: check("return { checks: { a: true }, reward: 1, blob: 'x'.repeat(5e6) };"),
    fault: "invalid-verdict",
    message: /^The checker returned no verdict: it is too large \(5000\d+ characters as JSON/,
    timeoutMs: 10_000,
  },
  {
    name: "a cyclic verdict",
    source: check("const v = { checks: {}, reward: 1 }; v.self = v; return v;"),
    fault: "invalid-verdict",
    message: /^The checker returned no verdict: it cannot be read as JSON: TypeError/,
  },
  {
    name: "a Proxy verdict whose traps loop",
    source: check("return new Proxy({}, { get() { for (;;) {} }, ownKeys() { for (;;) {} } });"),
    fault: "timeout",
    message: /^The checker did not finish within 200ms$/,
  },
  {
    name: "a Proxy verdict whose traps throw",
    source: check("return new Proxy({}, { ownKeys() { throw new Error('no keys'); } });"),
    fault: "invalid-verdict",
    message: /^The checker returned no verdict: it cannot be read as JSON: Error: no keys/,
  },
  {
    name: "checks that are not booleans",
    source: check("return { checks: { a: 1, b: 'true', c: null }, reward: 1 };"),
    fault: "invalid-verdict",
    message:
      /^The checker returned no verdict: checks\.a: expected true or false, got 1; checks\.b: expected true or false, got "true"; checks\.c: expected true or false, got null$/,
  },
  {
    name: "a NaN reward",
    source: check("return { checks: {}, reward: NaN };"),
    fault: "invalid-verdict",
    message: /^The checker returned no verdict: reward: expected a number in \[0, 1\], got NaN$/,
  },
  {
    name: "a reward of 2",
    source: check("return { checks: {}, reward: 2 };"),
    fault: "invalid-verdict",
    message: /^The checker returned no verdict: reward: expected a number in \[0, 1\], got 2$/,
  },
  {
    name: "a reward of -1",
    source: check("return { checks: {}, reward: -1 };"),
    fault: "invalid-verdict",
    message: /^The checker returned no verdict: reward: expected a number in \[0, 1\], got -1$/,
  },
  {
    name: 'a reward of "1"',
    source: check("return { checks: {}, reward: '1' };"),
    fault: "invalid-verdict",
    message: /^The checker returned no verdict: reward: expected a number in \[0, 1\], got "1"$/,
  },
  {
    name: "a missing reward",
    source: check("return { checks: { a: true } };"),
    fault: "invalid-verdict",
    message:
      /^The checker returned no verdict: reward: expected a number in \[0, 1\], got nothing$/,
  },
  {
    name: "no verdict at all",
    source: check("return;"),
    fault: "invalid-verdict",
    message: /expected an object with `checks` and `reward`, got undefined$/,
  },
  {
    name: "throwing a string",
    source: check("throw 'no answer';"),
    fault: "threw",
    message: /^The checker threw a non-Error value: "no answer"$/,
  },
  {
    name: "throwing null",
    source: check("throw null;"),
    fault: "threw",
    message: /^The checker threw a non-Error value: null$/,
  },
  {
    name: "throwing an object whose toString throws",
    source: check("throw { toString() { throw new Error('gotcha'); }, valueOf() { throw 1; } };"),
    fault: "threw",
    message: /^The checker threw a non-Error value: \{\}$/,
  },
  {
    name: "throwing a value whose inspection loops",
    source: check(
      "Object.defineProperty(Error, Symbol.hasInstance, { value() { for (;;) {} } }); throw { get name() { for (;;) {} } };",
    ),
    fault: "threw",
    message: /^The checker threw a value that cannot be shown$/,
  },
  {
    name: "throwing an error with a 20 MB message",
    source: check("throw new Error('x'.repeat(20e6));"),
    fault: "threw",
    message: /^The checker threw Error: x{500}… \(checker\.js line 2/,
  },
  {
    name: "a syntax error",
    source: "export function check(input) {\n  return { checks: {}, reward: 1 ;\n}",
    fault: "syntax",
    message: /^checker\.js has a syntax error: .*\(checker\.js line 2/,
  },
  {
    name: "no check export",
    source: "export function grade() { return { checks: {}, reward: 1 }; }",
    fault: "no-check",
    message: /^checker\.js exports no `check` function$/,
  },
  {
    name: "only a default export",
    source: "export default function check() { return { checks: {}, reward: 1 }; }",
    fault: "no-check",
    message:
      /^checker\.js exports no `check` function \(it has a default export; export the function by name: `export function check\(input\)`\)$/,
  },
  {
    name: "a check that is not a function",
    source: "export const check = { checks: {}, reward: 1 };",
    fault: "no-check",
    message: /^checker\.js exports `check` but it is an object, not a function$/,
  },
  {
    name: "a static import",
    source: 'import { readFileSync } from "node:fs";\n' +
      check("return readFileSync('/etc/passwd');"),
    fault: "syntax",
    message: /^checker\.js cannot import "node:fs": a checker must be self-contained/,
  },
  {
    name: 'a dynamic import("x")',
    source: check("return import('x');"),
    fault: "threw",
    message:
      /^The checker threw Error: checker\.js cannot import "x": the sandbox loads no modules/,
  },
  {
    name: "reaching Deno",
    source: check("return Deno.readTextFileSync('/etc/hostname');"),
    fault: "threw",
    message: /^The checker threw ReferenceError: 'Deno' is not defined \(checker\.js line 2/,
  },
  {
    name: "reaching fetch",
    source: check("return fetch('http://127.0.0.1:9/');"),
    fault: "threw",
    message: /^The checker threw ReferenceError: 'fetch' is not defined/,
  },
  {
    name: "reaching the host through Function and eval",
    source: check(
      "const g = Function('return this')(); const h = (0, eval)('globalThis');" +
        " return g.Deno.env.get('HOME') + h.process.env.HOME;",
    ),
    fault: "threw",
    message: /^The checker threw TypeError: cannot read property 'env' of undefined/,
  },
  {
    name: "setTimeout",
    source: check("setTimeout(() => {}, 10); return { checks: {}, reward: 1 };"),
    fault: "threw",
    message: /^The checker threw ReferenceError: 'setTimeout' is not defined/,
  },
  {
    name: "a native loop over a fake huge length",
    source: check("return Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1);"),
    fault: "threw",
    message: /^The checker threw RangeError: Array\.prototype\.indexOf refused a length of/,
  },
  {
    name: "a native loop through a Set over a grown sparse array",
    source: check("const a = []; const it = a.values(); a.length = 2 ** 32 - 1; new Set(it);"),
    fault: "timeout",
    message: /^The checker did not finish within 200ms$/,
  },
  {
    name: "a native loop through concat and flat",
    source: check("const a = []; a.length = 2 ** 32 - 1; [].concat(a); [a].flat();"),
    fault: "timeout",
    message: /^The checker did not finish within 200ms$/,
  },
];

Deno.test("check() contains every hostile checker, and the pool answers normally after each", async (t) => {
  assert.ok(HOSTILE.length >= 25);
  const pool = createCheckerPool({ workers: 2, memoryBytes: 64 * 1024 * 1024 });
  try {
    for (const h of HOSTILE) {
      await t.step(`contains ${h.name}`, async () => {
        const run = await pool.check(h.source, INPUT, { timeoutMs: h.timeoutMs ?? 200 });
        assert.equal(run.ok, false, `expected a fault, got ${JSON.stringify(run)}`);
        if (run.ok) return;
        assert.equal(run.fault, h.fault, run.message);
        assert.match(run.message, h.message);
        assert.ok(run.message.length < 1200, `a message of ${run.message.length} characters`);
        const after = await pool.check(NORMAL, INPUT);
        assert.deepEqual(after.ok && after.verdict, {
          checks: { total: true, clean: true },
          reward: 1,
        });
      });
    }
    // Every overrun above ended inside the sandbox: none needed the host to abandon a worker.
    assert.equal(pool.stats().workersAbandoned, 0);
  } finally {
    pool.close();
  }
});

Deno.test("check() keeps a checker's pollution of its input and prototypes from the host and the next call", async () => {
  const pool = createCheckerPool({ workers: 1 });
  const input: CheckerInput = structuredClone(INPUT);
  try {
    const polluter = await pool.check(
      check(`
        input.gold.total = 0;
        input.files["/out/answer.edn"] = "{:total 0}";
        input.__proto__.polluted = "yes";
        Object.prototype.polluted = "yes";
        Object.prototype.checks = { hijacked: true };
        Array.prototype.push = () => 0;
        globalThis.edn = { parse: () => ({ total: 42 }) };
        return JSON.parse('{"checks": {"__proto__": true, "constructor": true}, "reward": 1}');`),
      input,
    );
    assert.equal(polluter.ok, true, JSON.stringify(polluter));
    assert.deepEqual(polluter.ok && Object.keys(polluter.verdict.checks).sort(), [
      "__proto__",
      "constructor",
    ]);
    assert.deepEqual(input, INPUT);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(({} as Record<string, unknown>).hijacked, undefined);
    assert.equal(typeof ({} as Record<string, unknown>).constructor, "function");

    const next = await pool.check(NORMAL, { ...INPUT, files: { "/out/answer.edn": "{:total 7}" } });
    assert.deepEqual(next.ok && next.verdict, { checks: { total: false, clean: true }, reward: 0 });
  } finally {
    pool.close();
  }
});

Deno.test("check() lets no checker read a file that the host can read", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-sandbox-" });
  const secret = `secret-${crypto.randomUUID()}`;
  const path = join(dir, "secret.txt");
  await Deno.writeTextFile(path, secret);
  assert.equal(await Deno.readTextFile(path), secret);
  const pool = createCheckerPool({ workers: 1 });
  try {
    const run = await pool.check(
      `export async function check({ params }) {
        const path = params.path;
        const routes = {
          "Deno.readTextFileSync": () => Deno.readTextFileSync(path),
          "globalThis.Deno": () => globalThis.Deno.readTextFileSync(path),
          "Function('return this')": () => Function("return this")().Deno.readTextFileSync(path),
          "constructor chain": () => ({}).constructor.constructor("return Deno")().readTextFileSync(path),
          "console.log.constructor": () => console.log.constructor("return Deno")().readTextFileSync(path),
          "eval": () => eval("Deno.readTextFileSync(path)"),
          "fetch file URL": () => fetch("file://" + path),
          "XMLHttpRequest": () => { const x = new XMLHttpRequest(); x.open("GET", "file://" + path, false); x.send(); return x.responseText; },
          "import() of the path": () => import(path),
          "import() of a file URL": () => import("file://" + path),
          "import() of a data URL": () => import("data:text/javascript,export default 1"),
          "import() of node:fs": () => import("node:fs"),
          "quickjs std": () => std.loadFile(path),
          "quickjs os": () => os.open(path),
          "require": () => require("fs").readFileSync(path, "utf8"),
          "process.binding": () => process.binding("fs"),
          "WebAssembly": () => WebAssembly.compile(new Uint8Array(8)),
          "Worker": () => new Worker(path),
          "importScripts": () => importScripts(path),
          "edn.parse of the path": () => edn.parse(path),
          "Atomics": () => Atomics.wait(new Int32Array(4), 0, 0),
        };
        const outcomes = {};
        for (const [name, attempt] of Object.entries(routes)) {
          try {
            const value = await attempt();
            outcomes[name] = "returned " + JSON.stringify(value);
          } catch (e) {
            outcomes[name] = "failed: " + String(e && e.message);
          }
        }
        console.log(JSON.stringify(outcomes));
        console.log(Object.getOwnPropertyNames(globalThis).join(","));
        const leaked = Object.values(outcomes).some((o) => o.includes(params.secretPrefix));
        return { checks: { leaked }, reward: leaked ? 1 : 0 };
      }`,
      { ...INPUT, params: { path, secretPrefix: "secret-" } },
    );
    assert.equal(run.ok, true, JSON.stringify(run));
    assert.deepEqual(run.ok && run.verdict, { checks: { leaked: false }, reward: 0 });
    const outcomes = JSON.parse(run.logs![0]) as Record<string, string>;
    assert.equal(Object.keys(outcomes).length, 21);
    for (const [route, outcome] of Object.entries(outcomes)) {
      if (route === "edn.parse of the path") {
        // It parses the path text as an EDN symbol; it never opens the file.
        assert.ok(!outcome.includes(secret), `${route}: ${outcome}`);
        continue;
      }
      assert.match(outcome, /^failed: /, `${route}: ${outcome}`);
    }
    assert.ok(!JSON.stringify(run).includes(secret));
    const globals = run.logs![1].split(",");
    for (
      const name of [
        "Deno",
        "fetch",
        "process",
        "require",
        "setTimeout",
        "setInterval",
        "WebAssembly",
        "Worker",
        "std",
        "os",
        "XMLHttpRequest",
      ]
    ) {
      assert.ok(!globals.includes(name), `the sandbox exposes ${name}`);
    }
    assert.ok(globals.includes("edn") && globals.includes("console"));
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("check() ends a checker that loops over slow edn.parse calls at its time limit, inside the sandbox", async () => {
  // QuickJS polls its interrupt handler once per 10,000 loop iterations: when each
  // iteration is a bridged parse of seconds, only the bridge itself can keep the limit.
  const pool = createCheckerPool({ workers: 1, hangMarginMs: 5_000 });
  const big = `const s = "[" + "1 ".repeat(3e6) + "]";`;
  try {
    assert.equal((await pool.check(NORMAL, INPUT)).ok, true); // the worker is warm
    for (
      const body of [
        `${big} for (;;) edn.parse(s);`,
        `${big} for (;;) { try { edn.parse(s); } catch (_) { /* keep going */ } }`,
        `${big} try { edn.parse(s); } catch (_) { /* swallowed */ } return { checks: {}, reward: 1 };`,
        `const v = []; for (let i = 0; i < 2e5; i++) v.push({ a: [i, "x"] });
         const t = JSON.stringify(v); for (;;) { try { edn.stringify(v); } catch (_) {} }`,
      ]
    ) {
      const run = await pool.check(check(body), INPUT, { timeoutMs: 300 });
      assert.equal(run.ok, false, JSON.stringify(run));
      assert.equal(!run.ok && run.fault, "timeout", JSON.stringify(run));
      assert.ok(run.ms < 300 + 2_000, `ended after ${Math.round(run.ms)} ms: ${body}`);
    }
    assert.equal(pool.stats().workersAbandoned, 0);
    const after = await pool.check(NORMAL, INPUT);
    assert.equal(after.ok, true, JSON.stringify(after));
  } finally {
    pool.close();
  }
});

Deno.test("with two workers and calls queued in each, a hung call and a memory bomb fault alone: every other call gets its own verdict", async () => {
  // A hang in native code only the host's watchdog ends (indexOf over 40 MB never polls the
  // interrupt handler), and a bomb that poisons its worker; 22 good calls around them.
  const pool = createCheckerPool({ workers: 2, hangMarginMs: 50, memoryBytes: 96 * 1024 * 1024 });
  const checker = `export function check({ params }) {
    if (params.kind === "hang") { const s = "a".repeat(40e6); let n = 0; for (;;) n += s.indexOf("b"); }
    if (params.kind === "bomb") { const a = []; for (;;) a.push(new Array(100000).fill(a.length)); }
    return { checks: { ok: true }, reward: params.n / 100 };
  }`;
  const kinds = Array.from({ length: 24 }, (_, n) => n === 5 ? "hang" : n === 13 ? "bomb" : "good");
  try {
    const runs = await Promise.all(
      kinds.map((kind, n) =>
        // The hang's limit is short (the watchdog ends it); the others' is the default, so
        // that the bomb meets its memory cap first however loaded the machine.
        pool.check(
          checker,
          { ...INPUT, params: { kind, n } },
          kind === "hang" ? { timeoutMs: 1000 } : {},
        )
      ),
    );
    runs.forEach((run, n) => {
      const got = run.ok ? run.verdict.reward : run.fault;
      const want = kinds[n] === "hang" ? "timeout" : kinds[n] === "bomb" ? "memory" : n / 100;
      assert.equal(got, want, `call ${n} (${kinds[n]}): ${JSON.stringify(run)}`);
    });
    const stats = pool.stats();
    // The hang lasts over a second: the calls waiting meanwhile brought the second worker.
    assert.equal(stats.workersPeak, 2);
    assert.equal(stats.workersReplaced, 2);
    assert.ok((await pool.check(checker, { ...INPUT, params: { kind: "good", n: 1 } })).ok);
  } finally {
    pool.close();
  }
});
