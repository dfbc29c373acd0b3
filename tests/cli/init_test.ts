import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { dvergrIn } from "../helpers/cli.ts";
import { TEMPLATE_FILES, TEMPLATES } from "../../cli/init_templates.ts";
import { HELP } from "../../cli/init.ts";

const TEMPLATE_DIR = fileURLToPath(new URL("../../cli/init_templates/", import.meta.url));

async function filesUnder(dir: string, root = dir): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const full = join(dir, e.name);
    if (e.isDirectory) out.push(...await filesUnder(full, root));
    else out.push(relative(root, full));
  }
  return out.sort();
}

for (const template of TEMPLATES) {
  Deno.test(`dvergr init --template ${template} writes a bundle that passes check and calibrate`, async () => {
    const cwd = await Deno.makeTempDir();
    const r = await dvergrIn(cwd, "init", "refund-check", "--template", template);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.trimEnd().split("\n");
    assert.match(
      lines[0],
      new RegExp(
        `^Wrote the bundle "refund-check" \\(template ${template}, \\d+ files\\) in refund-check$`,
      ),
    );
    assert.equal(lines[1], "It passes dvergr check and dvergr calibrate as written. Edit it next:");
    assert.match(lines[2], /^ {2}1\. workflow\.edn: /);
    assert.ok(
      lines.includes("Then: dvergr calibrate refund-check   (until it says calibrated)"),
      r.out,
    );
    const dir = join(cwd, "refund-check");
    assert.deepEqual(await filesUnder(dir), [...TEMPLATE_FILES[template].keys()].sort());
    assert.match(await Deno.readTextFile(join(dir, "workflow.edn")), /\{:title "Refund check"\n/);

    const check = await dvergrIn(cwd, "check", "refund-check");
    assert.equal(check.code, 0, check.out + check.err);
    assert.match(check.out, /^Problems {2}none$/m);
    const calibrate = await dvergrIn(cwd, "calibrate", "refund-check");
    assert.equal(calibrate.code, 0, calibrate.out + calibrate.err);
    assert.match(calibrate.out, /^calibrated: /m);
  });
}

Deno.test("the init templates are the files under cli/init_templates/, every one", async () => {
  for (const template of TEMPLATES) {
    const dir = join(TEMPLATE_DIR, template);
    const onDisk = await filesUnder(dir);
    assert.deepEqual([...TEMPLATE_FILES[template].keys()].sort(), onDisk, template);
    for (const path of onDisk) {
      assert.equal(TEMPLATE_FILES[template].get(path), await Deno.readTextFile(join(dir, path)));
    }
  }
});

Deno.test("dvergr init writes into the empty working directory, named after it", async () => {
  const cwd = join(await Deno.makeTempDir(), "my-web-task");
  await Deno.mkdir(cwd);
  const r = await dvergrIn(cwd, "init", "--template", "web", "--json");
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  assert.equal(j.format, "dvergr-init/1");
  assert.equal(j.bundle, "my-web-task");
  assert.equal(j.dir, cwd);
  assert.equal(j.template, "web");
  assert.ok(j.files.includes("web.edn"));
  assert.equal(j.next.length, 4);
  assert.deepEqual(await filesUnder(cwd), [...TEMPLATE_FILES.web.keys()].sort());
  assert.match(await Deno.readTextFile(join(cwd, "workflow.edn")), /\{:title "My web task"/);
});

Deno.test("dvergr init refuses a directory that is not empty, a bad name or template, writing nothing", async () => {
  const cwd = await Deno.makeTempDir();
  await Deno.mkdir(join(cwd, "taken"));
  await Deno.writeTextFile(join(cwd, "taken/notes.txt"), "mine");
  const taken = await dvergrIn(cwd, "init", "taken");
  assert.equal(taken.code, 2);
  assert.match(
    taken.err,
    /^error\[TARGET_EXISTS\]: Cannot write a bundle into "taken": it is not an empty directory\nhint: /,
  );
  assert.deepEqual(await filesUnder(join(cwd, "taken")), ["notes.txt"]);

  const name = await dvergrIn(cwd, "init", "My Bundle");
  assert.equal(name.code, 2);
  assert.match(name.err, /Cannot use workflow name "My Bundle"/);
  assert.match(name.err, /dvergr init my-bundle/);

  const template = await dvergrIn(cwd, "init", "x", "--template", "nope");
  assert.equal(template.code, 2);
  assert.match(
    template.err,
    /Cannot use --template "nope": there is no such template\nhint: Choose one of single, dataset, web/,
  );

  const file = await dvergrIn(cwd, "init", "taken/notes.txt");
  assert.equal(file.code, 2);
  assert.deepEqual((await filesUnder(cwd)).sort(), ["taken/notes.txt"]);
  assert.match(HELP, /^Example:\n {2}dvergr init /m);
});
