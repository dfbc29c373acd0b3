#!/usr/bin/env node
// The `dvergr` command of the npm package (docs/install.md): runs dvergr's TypeScript with
// the Deno runtime of the `deno` npm package, with exactly the permissions and V8 flags of
// deno.json's `dvergr` task.
//
// Deno refuses to strip types from files under node_modules (ERR_UNSUPPORTED_NODE_MODULES_
// TYPE_STRIPPING, as Node does), so the program's files are copied once per installed
// version into a cache directory and run from there; that copy's deno.json resolves the npm
// dependencies from the node_modules npm installed ("nodeModulesDir": "manual"), so nothing is
// downloaded a second time and the checker workers (started with --cached-only) find them.
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const crypto = require("node:crypto");
const childProcess = require("node:child_process");

const ROOT = path.resolve(__dirname, "..");
const FORWARDED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];

function fail(message) {
  process.stderr.write(`error[INSTALL]: ${message}\n`);
  process.exit(2);
}

/** The deno executable of the `deno` npm package (its platform package holds the binary). */
function denoExecutable() {
  let api;
  try {
    api = require(require.resolve("deno/install_api.cjs", { paths: [ROOT] }));
  } catch {
    fail(
      "Cannot find the Deno runtime: the `deno` npm package is not installed beside dvergr\n" +
        "hint: Reinstall dvergr with npm (`npm install -g ./dvergr-<version>.tgz`); it brings Deno",
    );
  }
  try {
    return api.runInstall();
  } catch (e) {
    fail(`Cannot find the Deno runtime for this platform: ${e && e.message}`);
  }
}

/** The files of the package (everything but node_modules), sorted, as relative paths. */
function packageFiles(dir, rel, out) {
  const entries = fs.readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (rel === "" && e.name === "node_modules") continue;
    const r = rel === "" ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) packageFiles(path.join(dir, e.name), r, out);
    else if (e.isFile()) out.push(r);
  }
  return out;
}

/** Where an npm dependency is, looked up as Node does: node_modules of ROOT and its parents. */
function dependencyDir(name) {
  for (let dir = ROOT;; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    if (fs.existsSync(path.join(candidate, "package.json"))) return candidate;
    if (path.dirname(dir) === dir) {
      fail(`Cannot find the npm package "${name}" dvergr depends on\nhint: Reinstall dvergr`);
    }
  }
}

function cacheBase() {
  const env = process.env;
  if (env.DVERGR_CACHE_DIR) return env.DVERGR_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return path.join(env.XDG_CACHE_HOME, "dvergr");
  return path.join(os.homedir() || os.tmpdir(), ".cache", "dvergr");
}

/** Copies the package's files to `dir` (a fresh directory) with a manual-mode deno.json. */
function writeCopy(dir, files, pkg) {
  for (const rel of files) {
    const to = path.join(dir, rel);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(path.join(ROOT, rel), to);
  }
  const config = JSON.parse(fs.readFileSync(path.join(ROOT, "deno.json"), "utf8"));
  config.nodeModulesDir = "manual";
  fs.writeFileSync(path.join(dir, "deno.json"), JSON.stringify(config, null, 2) + "\n");
  for (const name of Object.keys(pkg.optionalDependencies || {})) {
    if (name === "deno") continue;
    const link = path.join(dir, "node_modules", name);
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(dependencyDir(name), link, "dir");
  }
}

/**
 * The directory the program runs from: a copy of this package keyed by its version and the
 * identity of its files (a reinstall makes new files, so a new copy). Made under a temporary
 * name and renamed, so two first runs at once never see half a copy.
 */
function programDir() {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
  const files = packageFiles(ROOT, "", []);
  const hash = crypto.createHash("sha256").update(ROOT);
  for (const rel of files) {
    const s = fs.statSync(path.join(ROOT, rel));
    hash.update(`\0${rel}\0${s.size}\0${s.mtimeMs}\0${s.ctimeMs}\0${s.ino}`);
  }
  const base = path.join(cacheBase(), "program");
  const dir = path.join(base, `${pkg.version}-${hash.digest("hex").slice(0, 16)}`);
  if (fs.existsSync(path.join(dir, "main.ts"))) return dir;
  try {
    fs.mkdirSync(base, { recursive: true });
    const tmp = fs.mkdtempSync(path.join(base, ".partial-"));
    writeCopy(tmp, files, pkg);
    try {
      fs.renameSync(tmp, dir);
    } catch (e) {
      fs.rmSync(tmp, { recursive: true, force: true });
      if (!fs.existsSync(path.join(dir, "main.ts"))) throw e;
    }
  } catch (e) {
    fail(
      `Cannot prepare dvergr's program files in "${base}": ${e && e.message}\n` +
        "hint: Set DVERGR_CACHE_DIR to a writable directory",
    );
  }
  return dir;
}

/** `deno run` flags of deno.json's `dvergr` task: `deno run FLAGS… main.ts`. */
function taskFlags(dir) {
  const config = JSON.parse(fs.readFileSync(path.join(dir, "deno.json"), "utf8"));
  const words = String(config.tasks && config.tasks.dvergr).split(/\s+/);
  if (words[0] !== "deno" || words[1] !== "run" || words[words.length - 1] !== "main.ts") {
    fail(`deno.json's dvergr task is not \`deno run FLAGS main.ts\`: ${config.tasks.dvergr}`);
  }
  return words.slice(2, -1);
}

function main() {
  const deno = denoExecutable();
  const dir = programDir();
  const args = [
    "run",
    ...taskFlags(dir),
    "--config",
    path.join(dir, "deno.json"),
    path.join(dir, "main.ts"),
    ...process.argv.slice(2),
  ];
  const child = childProcess.spawn(deno, args, { stdio: "inherit" });
  // A terminal's Ctrl-C reaches both processes; a signal sent to this one alone is passed on.
  // dvergr treats a repeated SIGINT like the first, so passing it on is always safe.
  const forward = (signal) => {
    if (child.exitCode === null) child.kill(signal);
  };
  for (const s of FORWARDED_SIGNALS) process.on(s, forward);
  child.on("error", (e) => fail(`Cannot start Deno (${deno}): ${e.message}`));
  child.on("exit", (code, signal) => {
    for (const s of FORWARDED_SIGNALS) process.removeListener(s, forward);
    if (signal) process.kill(process.pid, signal);
    else process.exit(code);
  });
}

main();
