import assert from "node:assert/strict";
import { caseId, isBlankCell } from "../../../core/casepack/case_id.ts";
import { relativePathProblem } from "../../../core/bundle/file_map.ts";

Deno.test("caseId() trims the cell and replaces runs outside [A-Za-z0-9._-] by _", () => {
  assert.equal(caseId("  B0001 "), "B0001");
  assert.equal(caseId("A 1"), "A_1");
  assert.equal(caseId("A/1"), "A_1");
  assert.equal(caseId("A_1"), "A_1");
  assert.equal(caseId("Rechnung Nr. 7 / Ä"), "Rechnung_Nr._7_");
  assert.equal(caseId(4210), "4210");
  assert.equal(caseId("   "), null);
  assert.equal(caseId(null), null);
  assert.equal(isBlankCell([]), true);
});

Deno.test("caseId() never gives a segment that a bundle store refuses (., .., .git)", () => {
  assert.equal(caseId("."), "_");
  assert.equal(caseId(".."), "__");
  assert.equal(caseId(".git"), "_git");
  assert.equal(caseId(".GIT"), "_GIT");
  assert.equal(caseId(".gitignore"), ".gitignore");
  assert.equal(caseId(".hidden"), ".hidden");
  for (const id of [".git", ".Git", "..", "."]) {
    const c = caseId(id)!;
    assert.equal(relativePathProblem(`cases/${c}/gold.edn`), null);
    assert.notEqual(c.toLowerCase(), ".git");
  }
});

Deno.test("caseId() shortens an id too long for a file name, keeping long ids distinct", () => {
  const long = "X".repeat(300);
  const a = caseId(long)!;
  const b = caseId(long.slice(0, 299) + "Y")!;
  assert.ok(a.length <= 200, `${a.length} characters`);
  assert.ok(b.length <= 200);
  assert.notEqual(a, b);
  assert.equal(caseId(long), a); // the same cell gives the same id
  assert.ok(a.startsWith("X".repeat(150)));
  const edge = "Z".repeat(200);
  assert.equal(caseId(edge), edge); // 200 characters are kept as they are
});
