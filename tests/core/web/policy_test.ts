import assert from "node:assert/strict";
import {
  composePolicies,
  decideHost,
  joinDeny,
  meetAllow,
  minimalHosts,
  namesHostExplicitly,
  policyOf,
  readsAnything,
  webModeOf,
} from "../../../core/web/policy.ts";
import { hostOf, isUnder, normalizeHost } from "../../../core/web/host.ts";
import { seededRandom } from "../../../core/seeded_random.ts";

const HOSTS = ["a.com", "docs.a.com", "x.docs.a.com", "b.com", "c.b.com", "d.com", "www.e.com"];

function randomList(r: () => number): string[] | null {
  if (r() < 0.15) return null;
  return HOSTS.filter(() => r() < 0.35);
}

/** The oracle: a host is allowed by a list when it is under one of its (normalised) entries. */
const allows = (l: string[] | null, h: string) =>
  l === null || l.some((a) => isUnder(h, normalizeHost(a)));
const PROBES = [
  ...HOSTS.map((h) => h.replace(/^www\./, "")),
  "y.x.docs.a.com",
  "z.c.b.com",
  "other.org",
];

Deno.test("meetAllow() allows exactly what both lists allow, minimal, associative and commutative (300 runs)", () => {
  const r = seededRandom(20261001);
  for (let i = 0; i < 300; i++) {
    const [a, b, c] = [randomList(r), randomList(r), randomList(r)];
    const ab = meetAllow(a, b);
    for (const h of PROBES) {
      assert.equal(allows(ab, h), allows(a, h) && allows(b, h), `${a} ∧ ${b} on ${h}`);
    }
    if (ab !== null) assert.deepEqual(ab, minimalHosts(ab));
    assert.deepEqual(meetAllow(meetAllow(a, b), c), meetAllow(a, meetAllow(b, c)));
    assert.deepEqual(meetAllow(a, b), meetAllow(b, a));
    const d1 = joinDeny(a ?? [], b ?? []);
    for (const h of PROBES) {
      assert.equal(
        d1.some((d) => isUnder(h, d)),
        (a ?? []).concat(b ?? []).some((d) => isUnder(h, normalizeHost(d))),
      );
    }
    assert.deepEqual(
      joinDeny(joinDeny(a ?? [], b ?? []), c ?? []),
      joinDeny(a ?? [], joinDeny(b ?? [], c ?? [])),
    );
  }
});

Deno.test("meetAllow() of {a.com} and {docs.a.com, b.com} is {docs.a.com}", () => {
  assert.deepEqual(meetAllow(["a.com"], ["docs.a.com", "b.com"]), ["docs.a.com"]);
  assert.deepEqual(minimalHosts(["docs.a.com", "A.com", "www.b.com", "b.com"]), ["a.com", "b.com"]);
  assert.equal(meetAllow(null, null), null);
});

Deno.test("decideHost() checks deny first, then the allow-list, with docs/compatibility.md §9.3's messages", () => {
  const p = policyOf({ allowedSources: ["dust.tt"], blockedSources: [] });
  assert.deepEqual(decideHost(p, hostOf("https://docs.dust.tt/x")!), { ok: true });
  assert.deepEqual(decideHost(p, hostOf("https://evil.com/")!), {
    ok: false,
    reason: "not-allowed",
    message: "evil.com is not among the sources this task may read",
  });
  const both = policyOf({ allowedSources: ["simm.is"], blockedSources: ["simm.is"] });
  assert.deepEqual(decideHost(both, hostOf("https://www.Simm.is/about")!), {
    ok: false,
    reason: "blocked",
    message: "simm.is is a blocked source for this task",
  });
  const composed = composePolicies(
    policyOf({ blockedSources: ["a.com"] }),
    policyOf({ allowedSources: ["b.com"] }),
  );
  assert.deepEqual(composed, { allow: ["b.com"], deny: ["a.com"] });
});

Deno.test("hostOf() lower-cases, drops userinfo and a leading www.", () => {
  assert.equal(hostOf("https://user:pw@WWW.Example.COM:8443/x?y"), "example.com");
  assert.equal(hostOf("http://127.0.0.1:9/"), "127.0.0.1");
  assert.equal(hostOf("not a url"), null);
});

Deno.test("webModeOf() gives no web unless the bundle asks for one, and none when nothing may be read", () => {
  assert.equal(webModeOf({ fetched: false }), "off");
  assert.equal(webModeOf({ fetched: true }), "live");
  assert.equal(webModeOf({ fetched: false, blockedSources: ["x.com"] }), "live");
  assert.equal(webModeOf({ fetched: false, web: "frozen" }), "frozen");
  assert.equal(webModeOf({ fetched: true, allowedSources: [] }), "off");
  assert.equal(
    webModeOf({ fetched: true, allowedSources: ["a.com"], blockedSources: ["a.com"] }),
    "off",
  );
  assert.equal(
    readsAnything(policyOf({ allowedSources: ["docs.a.com"], blockedSources: ["b.com"] })),
    true,
  );
});

Deno.test("namesHostExplicitly() is true only for a host the allow-list names itself", () => {
  assert.equal(namesHostExplicitly({ allowedSources: ["127.0.0.1"] }, "127.0.0.1"), true);
  assert.equal(
    namesHostExplicitly({ allowedSources: ["example.com"] }, "internal.example.com"),
    false,
  );
  assert.equal(namesHostExplicitly({}, "localhost"), false);
});
