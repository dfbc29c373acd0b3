import assert from "node:assert/strict";
import { SANDBOX_NAMES, sandboxNameProblems } from "../../../core/bundle/sandbox_names.ts";
import { bundleProblems } from "../../../core/bundle/parse.ts";
import { SANDBOX_GATEWAY_DIR } from "../../../adapters/gateway/attempt_gateway.ts";
import { recallBundle } from "../../helpers/bundles.ts";

const source = (path: string) =>
  Deno.readTextFileSync(new URL(`../../../${path}`, import.meta.url));

Deno.test("SANDBOX_NAMES holds every name the command candidate refuses and dvergr's own mounts", () => {
  const command = source("adapters/candidates/command/command.ts");
  const reserved = /const RESERVED = new Set\(\[([^\]]*)\]\)/.exec(command);
  assert.ok(reserved, "command.ts declares RESERVED");
  const names = [...reserved[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  assert.ok(names.length >= 10);
  const limits = source("adapters/candidates/command/limits.ts");
  const mounts = [...limits.matchAll(/^const [A-Z]+ = "(\/[^"]+)";$/gm)].map((m) => m[1]);
  assert.ok(mounts.includes("/.dvergr/capture.tar"), mounts.join(" "));
  for (const path of [...mounts, SANDBOX_GATEWAY_DIR]) names.push(path.split("/")[1]);
  for (const name of names) assert.ok(SANDBOX_NAMES.has(name), name);
});

Deno.test("sandboxNameProblems() names shared fixtures, case fixtures and captures under a sandbox name", () => {
  const files = new Map([
    ["fixtures/docs/a.md", "ok"],
    ["fixtures/proc/x", "no"],
    ["fixtures/proc/y", "no"],
    ["fixtures/run/x", "no"],
    ...["c1", "c2", "c3", "c4", "c5"].map((
      c,
    ): [string, string] => [`cases/${c}/fixtures/.dvergr/seed`, "no"]),
    ["cases/c1/fixtures/docs/b.md", "ok"],
  ]);
  const problems = sandboxNameProblems(files, ["/out", "/tmp/answers"], 3);
  assert.deepEqual(problems.map((p) => [p.file, p.line, p.field]), [
    ["fixtures/proc/", undefined, undefined],
    ["fixtures/run/", undefined, undefined],
    ["cases/c1/fixtures/.dvergr/", undefined, undefined],
    ["workflow.edn", 3, ":capture"],
  ]);
  assert.match(
    problems[0].message,
    /^fixtures under \/proc, which the sandbox of a command candidate keeps for itself, .*every attempt would fault/,
  );
  assert.match(
    problems[2].message,
    /^fixtures of cases "c1", "c2", "c3" \(and 2 more cases\) under \/\.dvergr/,
  );
  assert.match(problems[3].message, /^"\/tmp\/answers" is under \/tmp/);
  assert.deepEqual(sandboxNameProblems(new Map([["fixtures/docs/a.md", ""]]), ["/out"]), []);
});

Deno.test("bundleProblems() refuses fixtures under /run and a capture under /etc, at :capture's line", () => {
  const files = recallBundle({
    "fixtures/run/x": "x",
    "workflow.edn": '{:title "Recall"\n :task "List the names."\n :capture ["/etc"]}',
  });
  const problems = bundleProblems(files);
  assert.deepEqual(problems.map((p) => `${p.file}:${p.line ?? ""}`), [
    "fixtures/run/:",
    "workflow.edn:3",
  ]);
});
