import assert from "node:assert/strict";
import { readWebPolicyText } from "../../../core/web/policy_file.ts";
import type { DvergrError } from "../../../core/errors.ts";

const FILE = "/h/web-policy.edn";

Deno.test("readWebPolicyText() reads a bundle's web section shape into a policy", () => {
  assert.deepEqual(
    readWebPolicyText(
      ';; ours\n{:allowed-sources ["docs.a.com" "B.com"]\n :blocked-sources ["www.wiki.internal"]}',
      FILE,
    ),
    { allow: ["b.com", "docs.a.com"], deny: ["wiki.internal"] },
  );
  assert.deepEqual(readWebPolicyText("{}", FILE), { allow: null, deny: [] });
  assert.deepEqual(readWebPolicyText("{:allowed-sources []}", FILE), { allow: [], deny: [] });
});

Deno.test("readWebPolicyText() names the file, the line and the field of what it cannot take, with a hint", () => {
  const refused = (text: string, message: RegExp, hint: RegExp, code = "POLICY_INVALID") =>
    assert.throws(() => readWebPolicyText(text, FILE), (e: DvergrError) => {
      assert.equal(e.code, code);
      assert.match(e.message, message);
      assert.match(e.hint ?? "", hint);
      return true;
    });
  refused(
    '{:allowed-sources ["a.com"]\n :blocked-source ["b.com"]}',
    /^Cannot read the web policy \/h\/web-policy\.edn line 2: :blocked-source: unknown key \(known: :allowed-sources, :blocked-sources\)$/,
    /^Write \{:allowed-sources \["docs\.example\.com"\] :blocked-sources/,
  );
  refused(
    '{\n\n:blocked-sources "b.com"}',
    /web-policy\.edn line 3: :blocked-sources: expected a vector of host names, found the string "b\.com"$/,
    /Write :blocked-sources \["docs\.example\.com"\]/,
  );
  refused(
    "{:allowed-sources [:a.com]}",
    /line 1: :allowed-sources: expected a vector of host names, found the keyword :a\.com in it$/,
    /strings in double quotes/,
  );
  refused(
    '{:blocked-sources\n ["https://wiki.internal/x"]}',
    /line 1: :blocked-sources: "https:\/\/wiki\.internal\/x" is a URL: a source is a host name such as "wiki\.internal"/,
    /example\.com covers www\.example\.com and docs\.example\.com/,
  );
  refused(
    '["a.com"]',
    /^Cannot read the web policy \/h\/web-policy\.edn: expected a map, found a vector$/,
    /Write \{/,
  );
  refused(
    "{:allowed-sources [",
    /^\/h\/web-policy\.edn line 1, column \d+: /,
    /Close it/,
    "EDN_SYNTAX",
  );
});
