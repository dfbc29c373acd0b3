/**
 * The layers hold: the module graph (`deno info --json`, offline) against the layering
 * table of the README's Architecture section. Fails on an import edge the table does not
 * allow, on a module cycle or a cycle between sibling folders, on a source file in no layer, and on
 * `Deno.`, `Date.now` or `console.` in the kernel, the domain or the ports.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
/** Entry points: the program, and the checker worker it starts by URL. */
const ENTRIES = ["main.ts", "sandbox/checker_worker.ts"];
/** Layers whose code must not reach the process, the clock or the console. */
const PURE = ["kernel", "domain", "ports"];
/** What the pure layers may import from outside the project. */
/** (`node:zlib` is a pure function: the git codecs inflate and deflate with it.) */
const PURE_EXTERNAL = ["node:crypto", "node:path", "node:buffer", "node:zlib", "npm:zod"];

interface Layer {
  name: string;
  /** Path patterns: `dir/` (everything below), `dir/*.ts` (files directly in it), `file.ts`. */
  patterns: string[];
  mayImport: Set<string>;
}

/** The README's layering table. */
function readLayers(): Layer[] {
  const readme = Deno.readTextFileSync(`${ROOT}README.md`);
  const section = readme.slice(readme.indexOf("## Architecture"));
  const rows = section.split("\n").filter((l) => /^\| [a-z]+ +\| `/.test(l));
  const layers = rows.map((row) => {
    const [name, folders, may] = row.split("|").slice(1, 4).map((c) => c.trim());
    return {
      name,
      patterns: [...folders.matchAll(/`([^`]+)`/g)].map((m) => m[1]),
      mayImport: new Set(may.split(",").map((s) => s.trim())),
    };
  });
  assert.ok(layers.length >= 6, "the README's Architecture section has the layering table");
  const names = layers.map((l) => l.name);
  for (const l of layers) {
    if (l.mayImport.has("every layer")) l.mayImport = new Set(names);
    l.mayImport.add(l.name);
    for (const m of l.mayImport) assert.ok(names.includes(m), `layer ${l.name}: unknown ${m}`);
  }
  return layers;
}

function matches(pattern: string, path: string): boolean {
  if (pattern.endsWith("/")) return path.startsWith(pattern);
  if (pattern.endsWith("/*.ts")) {
    const dir = pattern.slice(0, -"*.ts".length);
    return path.startsWith(dir) && !path.slice(dir.length).includes("/") && path.endsWith(".ts");
  }
  return path === pattern;
}

/** The layer of a project path; the longest matching pattern wins. */
function layerOf(layers: Layer[], path: string): Layer | undefined {
  let best: { layer: Layer; length: number } | undefined;
  for (const layer of layers) {
    for (const p of layer.patterns) {
      if (matches(p, path) && (!best || p.length > best.length)) best = { layer, length: p.length };
    }
  }
  return best?.layer;
}

interface Graph {
  /** Project modules (paths relative to the root) and what they import. */
  local: Map<string, { project: Set<string>; external: Set<string> }>;
}

/**
 * The npm package a module of node_modules belongs to, as `npm:<name>` (deno.json's
 * "nodeModulesDir": "manual": `deno info` names them by path, not by npm: specifier), or null.
 */
function npmPackageOf(specifier: string): string | null {
  const m = /\/node_modules\/(?:\.deno\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/.][^/]*)\//.exec(
    specifier,
  );
  return m ? `npm:${m[1]}` : null;
}

function readGraph(): Graph {
  const local: Graph["local"] = new Map();
  const rootUrl = new URL("../", import.meta.url).href;
  const rel = (s: string) =>
    s.startsWith(rootUrl) && npmPackageOf(s) === null ? s.slice(rootUrl.length) : null;
  for (const entry of ENTRIES) {
    const out = new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", entry],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: {
        specifier: string;
        dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
      }[];
    };
    for (const m of info.modules) {
      const from = rel(m.specifier);
      if (from === null || local.has(from)) continue;
      const node = { project: new Set<string>(), external: new Set<string>() };
      for (const d of m.dependencies ?? []) {
        for (const t of [d.code?.specifier, d.type?.specifier]) {
          if (!t) continue;
          const to = rel(t);
          if (to !== null) node.project.add(to);
          else {
            node.external.add(
              npmPackageOf(t) ?? t.replace(/^(npm:\/?(@[^/@]+\/)?[^/@]+).*$/, "$1"),
            );
          }
        }
      }
      local.set(from, node);
    }
  }
  return { local };
}

/** The strongly connected components of more than one node (or a self-loop): the cycles. */
function cycles(edges: Map<string, Set<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || edges.get(v)?.has(v)) out.push(scc.sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  return out;
}

const layers = readLayers();
const graph = readGraph();

Deno.test("architecture: every module of the program is in a layer of the README's table", () => {
  const unplaced = [...graph.local.keys()].filter((p) => !layerOf(layers, p));
  assert.deepEqual(unplaced, [], "add these folders to the layering table in README.md");
});

/** The import edges of `graph` the layering table does not allow, as "from (layer) -> to (layer)". */
function badEdges(layers: Layer[], graph: Graph): string[] {
  const bad: string[] = [];
  for (const [from, node] of graph.local) {
    const a = layerOf(layers, from);
    if (!a) continue;
    for (const to of node.project) {
      const b = layerOf(layers, to);
      if (b && !a.mayImport.has(b.name)) bad.push(`${from} (${a.name}) -> ${to} (${b.name})`);
    }
    if (PURE.includes(a.name)) {
      for (const ext of node.external) {
        if (!PURE_EXTERNAL.includes(ext)) bad.push(`${from} (${a.name}) -> ${ext}`);
      }
    }
  }
  return bad;
}

/** The use cases: they reach adapters only through the ports (core/ports/services.ts). */
const USE_CASES = ["engine", "ops"];

Deno.test("architecture: every import edge is one the layering table allows", () => {
  assert.deepEqual(badEdges(layers, graph), []);
});

Deno.test("architecture: the engine and the ops import no adapter, and the table says so", () => {
  const adapters = layers.find((l) => l.name === "adapters")!;
  for (const name of USE_CASES) {
    const layer = layers.find((l) => l.name === name)!;
    assert.ok(!layer.mayImport.has("adapters"), `the table lets ${name} import adapters`);
  }
  const edges: string[] = [];
  for (const [from, node] of graph.local) {
    if (!USE_CASES.includes(layerOf(layers, from)?.name ?? "")) continue;
    for (const to of node.project) {
      if (layerOf(layers, to) === adapters) edges.push(`${from} -> ${to}`);
    }
  }
  assert.deepEqual(edges, []);
});

Deno.test("badEdges() reports an engine or ops module importing an adapter, type imports too", () => {
  const node = (project: string[]) => ({ project: new Set(project), external: new Set<string>() });
  const synthetic: Graph = {
    local: new Map([
      [
        "core/engine/run.ts",
        node(["core/ports/state_store.ts", "adapters/store/kv/state_store.ts"]),
      ],
      ["core/ops/op.ts", node(["core/engine/run.ts", "adapters/world/world.ts"])],
      ["core/ports/state_store.ts", node([])],
      ["adapters/store/kv/state_store.ts", node(["core/ports/state_store.ts"])],
      ["adapters/world/world.ts", node([])],
      ["cli/main.ts", node(["adapters/world/world.ts", "core/ops/op.ts"])],
    ]),
  };
  assert.deepEqual(badEdges(layers, synthetic), [
    "core/engine/run.ts (engine) -> adapters/store/kv/state_store.ts (adapters)",
    "core/ops/op.ts (ops) -> adapters/world/world.ts (adapters)",
  ]);
});

Deno.test("architecture: no module and no folder imports itself back through others", () => {
  const modules = new Map([...graph.local].map(([k, v]) => [k, v.project]));
  assert.deepEqual(cycles(modules), [], "module cycles");
  // Between sibling folders (core/bench and core/engine): a folder and the folders inside it
  // (sandbox and sandbox/clojure) may use each other, the layering test still holds them.
  const folders = new Map<string, Set<string>>();
  const dir = (p: string) => p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : ".";
  const nested = (a: string, b: string) =>
    a === "." || b === "." || a.startsWith(b + "/") || b.startsWith(a + "/");
  for (const [from, node] of graph.local) {
    const set = folders.get(dir(from)) ?? new Set<string>();
    for (const to of node.project) {
      if (dir(to) !== dir(from) && !nested(dir(to), dir(from))) set.add(dir(to));
    }
    folders.set(dir(from), set);
  }
  assert.deepEqual(cycles(folders), [], "folder cycles");
});

/** Source text without comments (strings are kept: they are rare in these layers). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

Deno.test("architecture: the kernel, the domain and the ports use no Deno., Date.now or console.", () => {
  const bad: string[] = [];
  for (const path of graph.local.keys()) {
    if (!PURE.includes(layerOf(layers, path)?.name ?? "")) continue;
    const lines = code(Deno.readTextFileSync(ROOT + path)).split("\n");
    lines.forEach((line, i) => {
      const m = line.match(/\bDeno\.|\bDate\.now\b|\bconsole\./);
      if (m) bad.push(`${path}:${i + 1}: ${m[0]}`);
    });
  }
  assert.deepEqual(bad, []);
});
