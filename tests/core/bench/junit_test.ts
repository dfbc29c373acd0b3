/** JUnit XML read back by a JUnit parser (junit2json, on xml2js): what CI systems would see. */
import assert from "node:assert/strict";
import { parse, type TestSuites } from "junit2json";
import { attemptRecord as record, crashedRecord } from "../../helpers/records.ts";
import { benchmarkJunit, calibrationJunit, escapeXml } from "../../../core/bench/junit.ts";
import type { CalibrationResult } from "../../../core/calibrate/calibrate.ts";
import { junit10Problems } from "../../helpers/junit_xsd.ts";

async function read(xml: string): Promise<TestSuites> {
  return await parse(xml) as TestSuites;
}

Deno.test("benchmarkJunit() writes one test case per cell: passed, failure, error, skipped", async () => {
  const cells = ["c1", "c2", "c3", "c4"].map((caseId) => ({
    candidate: "mine",
    caseId,
    repetition: 0,
  }));
  const records = [
    record({ candidate: "mine", caseId: "c1", elapsedMs: 1500 }),
    crashedRecord("c2"),
    record({
      candidate: "mine",
      caseId: "c3",
      status: "fault",
      verdict: null,
      passed: false,
      fault: { source: "checker", kind: "threw", message: "boom <&> \u0001" },
    }),
  ];
  const doc = await read(benchmarkJunit("words", cells, records));
  assert.equal(doc.tests, 4);
  assert.equal(doc.failures, 1);
  assert.equal(doc.errors, 1);
  const suite = doc.testsuite![0];
  assert.equal(suite.name, "words mine");
  assert.equal(suite.skipped, 1);
  const [ok, crashed, fault, skipped] = suite.testcase!;
  assert.equal(ok.name, "case c1 repetition 0");
  assert.equal(ok.classname, "words.mine");
  assert.equal(ok.time, 1.5);
  assert.equal(ok.failure, undefined);
  assert.equal(crashed.failure![0].type, "crashed");
  assert.match(crashed.failure![0].message!, /^crashed: exit status 2: sh: 0: cannot open/);
  assert.match(crashed.failure![0].inner!, /stderr \(last lines\):\nsh: 0: cannot open/);
  assert.equal(fault.error![0].type, "fault");
  assert.match(fault.error![0].message!, /checker threw: boom <&> $/);
  assert.match(skipped.skipped![0].message!, /did not run/);
});

Deno.test("calibrationJunit() writes the reference and each damaged variant as a test case", async () => {
  const run = (checks: Record<string, boolean>, reward: number) => ({
    ok: true as const,
    verdict: { checks, reward },
    ms: 12,
  });
  const result: CalibrationResult = {
    ok: false,
    bundleId: "b",
    reference: run({ a: true, b: true }, 1),
    damaged: {
      "kept": { run: run({ a: true, b: true }, 0.5), kept: ["a"], ok: false },
      "fine": { run: run({ a: false, b: true }, 0.5), kept: [], ok: true },
      "faulty": {
        run: { ok: false, fault: "threw", message: "checker threw Error: x", ms: 3 },
        kept: [],
        ok: false,
      },
    },
    problems: [
      "kept still passes [:a]",
      "faulty: the checker faulted (threw): checker threw Error: x",
    ],
  };
  const doc = await read(calibrationJunit("recall", result));
  const cases = doc.testsuite![0].testcase!;
  assert.deepEqual(cases.map((c) => c.name), [
    "reference",
    "damaged kept",
    "damaged fine",
    "damaged faulty",
  ]);
  assert.equal(cases[0].failure, undefined);
  assert.equal(cases[1].failure![0].message, "kept still passes [:a]");
  assert.equal(cases[2].failure, undefined);
  assert.equal(cases[3].error![0].type, "threw");
  assert.equal(doc.failures, 1);
  assert.equal(doc.errors, 1);
});

Deno.test("escapeXml() escapes markup and drops characters XML cannot hold", () => {
  assert.equal(escapeXml(`a<b>&"c'\u0000\u0007d\uD800`), "a&lt;b&gt;&amp;&quot;c&apos;d");
});

Deno.test("junit10Problems() holds a document to junit-10.xsd's rules", () => {
  const head = '<?xml version="1.0" encoding="UTF-8"?>\n';
  const ok = head +
    '<testsuites name="n" tests="1" failures="0" errors="0" time="1,234.5">\n' +
    '  <testsuite name="s" tests="1" failures="0" errors="0" skipped="0" time="0.100">\n' +
    '    <testcase classname="c" name="t" time="0.100"><skipped message="m"/></testcase>\n' +
    "  </testsuite>\n</testsuites>\n";
  assert.deepEqual(junit10Problems(ok), []);
  assert.deepEqual(
    junit10Problems(ok.replace('<testsuites name="n"', '<testsuites skipped="1" name="n"')),
    [
      "testsuites: <testsuites> may not have the attribute skipped",
    ],
  );
  assert.deepEqual(junit10Problems(ok.replace(' failures="0" errors="0" skipped', " skipped")), [
    "testsuites/testsuite[0]: <testsuite> lacks the required attribute failures",
    "testsuites/testsuite[0]: <testsuite> lacks the required attribute errors",
  ]);
  assert.deepEqual(junit10Problems(ok.replace('time="0.100">\n', 'time="0.1s">\n')), [
    'testsuites/testsuite[0]: time="0.1s" is not a SUREFIRE_TIME',
  ]);
  assert.deepEqual(junit10Problems(ok.replace("<skipped", "text<skipped")), [
    "testsuites/testsuite[0]/testcase[0]: <testcase> may not hold text",
  ]);
  assert.deepEqual(junit10Problems(ok.replace("<skipped", "<passed/><skipped")), [
    "testsuites/testsuite[0]/testcase[0]: <testcase> may not hold <passed>",
  ]);
  assert.match(junit10Problems(ok.replace("</testsuite>", ""))[0], /^not well-formed: /);
});

Deno.test("benchmarkJunit() and calibrationJunit() validate against Jenkins' junit-10.xsd", () => {
  const cells = ["c1", "c2", "c3", "c4"].map((caseId) => ({
    candidate: "mine",
    caseId,
    repetition: 0,
  }));
  const records = [
    record({ candidate: "mine", caseId: "c1", elapsedMs: 1_234_500 }),
    crashedRecord("c2"),
    record({
      candidate: "mine",
      caseId: "c3",
      status: "fault",
      verdict: null,
      passed: false,
      fault: { source: "checker", kind: "threw", message: 'boom <&> " \u0001' },
    }),
  ];
  // c4 did not run: a skipped test case, counted on its suite.
  assert.deepEqual(junit10Problems(benchmarkJunit("words", cells, records)), []);
  assert.deepEqual(junit10Problems(benchmarkJunit("words", [], [])), []);
  const result: CalibrationResult = {
    ok: false,
    bundleId: "b",
    reference: null,
    damaged: {},
    problems: ["calibration.edn has no :reference"],
  };
  assert.deepEqual(junit10Problems(calibrationJunit("recall", result)), []);
});
