import assert from "node:assert/strict";
import { parseBundle } from "../../../core/bundle/parse.ts";
import { freezeFiles } from "../../../core/web/freeze.ts";

const live = () =>
  parseBundle({
    name: "rivals",
    files: new Map([
      [
        "workflow.edn",
        ';; comments go\n{:title "Rivals" :task "t" :fetched true :blocked-sources ["simm.is"]}',
      ],
      ["checker.js", "export function check() { return { checks: {}, reward: 1 }; }"],
      ["fixtures/docs/a.md", "a"],
    ]),
  });

Deno.test("freezeFiles() writes :web :frozen, the title suffixed in place, and web.edn without blocked hosts", () => {
  const { files, dropped, pages } = freezeFiles(live(), {
    "https://docs.simm.is/compare": { title: "Compare", body: "the answer" },
    "https://wato.example/": { title: "Wato", body: "Wato is where teams work." },
  });
  assert.deepEqual(dropped, ["https://docs.simm.is/compare"]);
  assert.equal(pages, 1);
  assert.equal(
    files.get("workflow.edn"),
    '{:title "Rivals (frozen web)",\n :task "t",\n :fetched true,\n :blocked-sources ["simm.is"],\n :web :frozen}\n',
  );
  const frozen = parseBundle({ name: "rivals-frozen", files });
  assert.equal(frozen.definition.web, "frozen");
  assert.deepEqual(frozen.web, {
    "https://wato.example/": { title: "Wato", body: "Wato is where teams work." },
  });
  assert.equal(files.get("checker.js"), live().files.get("checker.js"));
});

Deno.test("freezeFiles() refuses with exit 1 when no page is left", () => {
  assert.throws(
    () => freezeFiles(live(), { "https://simm.is/": { title: "S", body: "s" } }),
    (e: unknown) => {
      const d = e as { message: string; result: boolean };
      return d.message === "Nothing to freeze: no fetched pages" && d.result;
    },
  );
  assert.throws(() => freezeFiles(live(), {}), /Nothing to freeze: no fetched pages/);
});
