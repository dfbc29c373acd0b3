/**
 * The npm package (package.json, bin/dvergr.cjs): what `npm pack` puts in it, and the
 * launcher running dvergr from an installed layout with no clone and no deno on PATH. The
 * install from the registry itself (`npm install -g ./dvergr-<version>.tgz`) is .ci/run's.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { VERSION } from "../../core/version.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Modules dvergr starts by URL or path rather than by import. */
const STARTED_ENTRIES = [
  "main.ts",
  "sandbox/checker_process.ts",
  "sandbox/checker_worker.ts",
  "sandbox/clojure_process.ts",
  "sandbox/clojure_worker.ts",
  "sandbox/js_eval_worker.ts",
];

function readJson(path: string) {
  return JSON.parse(Deno.readTextFileSync(join(ROOT, path)));
}

async function run(cmd: string, args: string[], opts: Deno.CommandOptions = {}) {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped", ...opts })
    .output();
  const dec = new TextDecoder();
  return { code: out.code, out: dec.decode(out.stdout), err: dec.decode(out.stderr) };
}

/** The files `npm pack` would put in the package, as relative paths. */
async function packedFiles(): Promise<string[]> {
  const r = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT });
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out)[0].files.map((f: { path: string }) => f.path);
}

interface Graph {
  /** Project files, relative to the root. */
  local: string[];
  /** npm packages, as name → version. */
  npm: Map<string, string>;
}

let graph: Promise<Graph> | undefined;

/** The module graphs of the modules dvergr runs (`deno info`, offline). */
function programGraph(): Promise<Graph> {
  graph ??= (async () => {
    const local: string[] = [];
    const npm = new Map<string, string>();
    for (const entry of STARTED_ENTRIES) {
      const info = await run(Deno.execPath(), ["info", "--json", entry], { cwd: ROOT });
      assert.equal(info.code, 0, info.err);
      for (const m of JSON.parse(info.out).modules as { specifier: string }[]) {
        // deno.json's "nodeModulesDir": "manual": npm modules are named by their path in
        // node_modules/.deno/<name>@<version>[_<peers>]/node_modules/<name>/.
        const inNodeModules = m.specifier.match(
          /\/node_modules\/\.deno\/[^/]+?@([^_/]+)(?:_[^/]*)?\/node_modules\/((?:@[^/]+\/)?[^/]+)\//,
        );
        if (inNodeModules) npm.set(inNodeModules[2], inNodeModules[1]);
        else if (m.specifier.startsWith("file:")) {
          local.push(fileURLToPath(m.specifier).slice(ROOT.length));
        }
        const p = m.specifier.match(/^npm:\/(@?[^@/]+(?:\/[^@/]+)?)@([^/_]+)/);
        if (p) npm.set(p[1], p[2]);
      }
    }
    return { local, npm };
  })();
  return graph;
}

Deno.test("package.json depends on the npm packages dvergr imports and on the CI's Deno", async () => {
  const pkg = readJson("package.json");
  assert.equal(pkg.version, VERSION);
  assert.equal(pkg.bin.dvergr, "bin/dvergr.cjs");
  // Deno reads a package.json's dependencies (not its optional ones) beside deno.json: listed
  // there, every clone would get a second Deno runtime in node_modules, first on PATH in tasks.
  assert.equal(pkg.dependencies, undefined);
  const expected = Object.fromEntries((await programGraph()).npm);
  const imports = Object.values(readJson("deno.json").imports) as string[];
  for (const [name, version] of Object.entries(expected)) {
    assert.ok(imports.includes(`npm:${name}@${version}`), `deno.json imports ${name}@${version}`);
  }
  const ci = Deno.readTextFileSync(join(ROOT, ".ci/run"));
  expected.deno = ci.match(/npm install -g deno@([0-9.]+)/)![1];
  assert.deepEqual(sorted(pkg.optionalDependencies), sorted(expected));
});

function sorted(o: Record<string, string>): [string, string][] {
  return Object.entries(o).sort(([a], [b]) => a < b ? -1 : 1);
}

Deno.test("npm pack holds every module dvergr loads, its examples and no tests", async () => {
  const files = new Set(await packedFiles());
  const { local } = await programGraph();
  assert.ok(local.length > 100, `${local.length} modules`);
  for (const path of [...local, ...STARTED_ENTRIES]) assert.ok(files.has(path), path);
  for (const path of ["bin/dvergr.cjs", "deno.json", "deno.lock", "package.json"]) {
    assert.ok(files.has(path), path);
  }
  assert.ok(files.has("examples/workflows/invoice-fields/workflow.edn"));
  assert.ok(files.has("examples/agents/careful.ts"));
  assert.deepEqual([...files].filter((f) => /^(tests|bench|\.ci)\//.test(f)), []);
});

/** The directory holding the `deno` npm package this Deno came from, if it did. */
function denoPackageOfThisDeno(): string | undefined {
  const dir = dirname(Deno.realPathSync(Deno.execPath()));
  try {
    Deno.statSync(join(dir, "install_api.cjs"));
    return dir;
  } catch {
    return undefined;
  }
}

/**
 * An installed layout like `npm install -g` makes: the packed files under
 * PREFIX/lib/node_modules/dvergr, its dependencies in its node_modules (this clone's), and
 * the `deno` package (the one this Deno came from, else one that answers with this Deno).
 */
async function installedLayout(): Promise<{ prefix: string; pkg: string }> {
  const prefix = await Deno.makeTempDir({ prefix: "dvergr-npm-" });
  const r = await run("npm", ["pack", "--ignore-scripts", "--pack-destination", prefix], {
    cwd: ROOT,
  });
  assert.equal(r.code, 0, r.err);
  const pkg = join(prefix, "lib/node_modules/dvergr");
  await Deno.mkdir(pkg, { recursive: true });
  const tar = await run("tar", [
    "-xzf",
    join(prefix, `dvergr-${VERSION}.tgz`),
    "-C",
    pkg,
    "--strip-components=1",
  ]);
  assert.equal(tar.code, 0, tar.err);
  const deps = Object.keys(readJson("package.json").optionalDependencies);
  for (const name of deps.filter((d) => d !== "deno")) {
    const link = join(pkg, "node_modules", name);
    await Deno.mkdir(dirname(link), { recursive: true });
    await Deno.symlink(Deno.realPathSync(join(ROOT, "node_modules", name)), link);
  }
  const denoPkg = join(pkg, "node_modules/deno");
  const found = denoPackageOfThisDeno();
  if (found) await Deno.symlink(found, denoPkg);
  else {
    await Deno.mkdir(denoPkg);
    await Deno.writeTextFile(join(denoPkg, "package.json"), '{"name":"deno","version":"0"}');
    await Deno.writeTextFile(
      join(denoPkg, "install_api.cjs"),
      `module.exports = { runInstall: () => ${JSON.stringify(Deno.execPath())} };\n`,
    );
  }
  await Deno.mkdir(join(prefix, "bin"));
  await Deno.symlink(join(pkg, "bin/dvergr.cjs"), join(prefix, "bin/dvergr"));
  return { prefix, pkg };
}

Deno.test("bin/dvergr.cjs runs an installed dvergr from any directory, without deno on PATH", async () => {
  const { prefix, pkg } = await installedLayout();
  const work = await Deno.makeTempDir({ prefix: "dvergr-user-" });
  // A deno first on PATH that fails: neither the launcher nor dvergr may use it.
  const fake = join(work, "fake-bin");
  await Deno.mkdir(fake);
  await Deno.writeTextFile(join(fake, "deno"), "#!/bin/sh\necho deno from PATH >&2\nexit 99\n");
  await Deno.chmod(join(fake, "deno"), 0o755);
  const env = {
    PATH: `${fake}:${prefix}/bin:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    DVERGR_CACHE_DIR: join(work, "cache"),
  };
  const dvergr = (...args: string[]) => run(join(prefix, "bin/dvergr"), args, { cwd: work, env });

  const version = await dvergr("--version");
  assert.equal(version.code, 0, version.err);
  assert.equal(version.out, `dvergr ${VERSION}\n`);

  // The program runs from a copy outside node_modules whose deno.json reads npm's node_modules.
  const copies = [...Deno.readDirSync(join(work, "cache/program"))].map((e) => e.name);
  assert.equal(copies.length, 1, copies.join(", "));
  assert.match(copies[0], new RegExp(`^${VERSION.replaceAll(".", "\\.")}-[0-9a-f]{16}$`));
  const copy = join(work, "cache/program", copies[0]);
  assert.equal(JSON.parse(Deno.readTextFileSync(join(copy, "deno.json"))).nodeModulesDir, "manual");

  // calibrate starts checker worker processes (--cached-only): they find the packages too.
  const calibrated = await dvergr("calibrate", join(pkg, "examples/workflows/meeting-actions"));
  assert.equal(calibrated.code, 0, calibrated.out + calibrated.err);
  assert.match(calibrated.out, /^calibrated: /m);
  assert.doesNotMatch(calibrated.err, /deno from PATH/);

  const unknown = await dvergr("no-such-command");
  assert.equal(unknown.code, 2);
  assert.match(unknown.err, /Unknown command "no-such-command"/);
  assert.deepEqual([...Deno.readDirSync(join(work, "cache/program"))].length, 1);
});
