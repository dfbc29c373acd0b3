import assert from "node:assert/strict";
import {
  composePolicies,
  decideHost,
  effectivePolicy,
  joinDeny,
  meetAllow,
  minimalHosts,
  namesHostExplicitly,
  policyIdentity,
  policyOf,
  readsAnything,
  sourceProblem,
  sourcesOf,
  sourcesPolicy,
  userPolicyOf,
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

Deno.test("A user's policy only narrows the bundle's: it never gives a web, widens an allow-list or unblocks a host", () => {
  const user = userPolicyOf(
    sourcesPolicy({ block: ["www.Wiki.internal"] }),
    { allow: ["docs.a.com", "b.com"] },
  )!;
  assert.deepEqual(user, { allow: ["b.com", "docs.a.com"], deny: ["wiki.internal"] });
  // Home file ∘ flags: the same composition, either way round.
  assert.deepEqual(
    userPolicyOf(sourcesPolicy({ allow: ["docs.a.com", "b.com"] }), { block: ["wiki.internal"] }),
    user,
  );
  assert.equal(userPolicyOf(null, undefined), null);
  assert.equal(userPolicyOf(null, {}), null);
  assert.deepEqual(sourcesPolicy(sourcesOf(user)), user);

  const bundle = { fetched: true, allowedSources: ["a.com"], blockedSources: ["x.a.com"] };
  const p = effectivePolicy(bundle, user);
  assert.deepEqual(p, { allow: ["docs.a.com"], deny: ["wiki.internal", "x.a.com"] });
  assert.equal(decideHost(p, "docs.a.com").ok, true);
  assert.deepEqual(decideHost(p, "a.com"), {
    ok: false,
    reason: "not-allowed",
    message: "a.com is not among the sources this task may read",
  });
  // b.com: the user allows it, the bundle does not.
  assert.equal(decideHost(p, "b.com").ok, false);
  // Unblocking is not a thing: a user's allow-list naming a blocked host leaves it blocked.
  const unblock = effectivePolicy(bundle, sourcesPolicy({ allow: ["x.a.com"] }));
  assert.equal(decideHost(unblock, "x.a.com").ok, false);

  // No web is given; a user's policy that lets nothing be read takes it away.
  assert.equal(webModeOf({ fetched: false }, sourcesPolicy({ allow: ["a.com"] })), "off");
  assert.equal(webModeOf(bundle, sourcesPolicy({ allow: ["b.com"] })), "off");
  assert.equal(webModeOf({ fetched: false, web: "frozen" }, user), "frozen");
});

Deno.test("policyIdentity() names the composed policy only when the user's changes what the bundle's decides", () => {
  const live = { fetched: true, allowedSources: ["a.com"] };
  assert.equal(policyIdentity(live, null), null);
  // Allowing more than the bundle, or blocking nothing, changes nothing.
  assert.equal(policyIdentity(live, sourcesPolicy({ allow: ["a.com", "b.com"] })), null);
  assert.equal(policyIdentity(live, sourcesPolicy({})), null);
  assert.deepEqual(policyIdentity(live, sourcesPolicy({ block: ["docs.a.com"] })), {
    allow: ["a.com"],
    deny: ["docs.a.com"],
  });
  // A frozen web is narrowed too (a blocked host is refused before web.edn is asked).
  assert.deepEqual(
    policyIdentity({ fetched: false, web: "frozen" }, sourcesPolicy({ block: ["b.com"] })),
    { allow: null, deny: ["b.com"] },
  );
  // A bundle without a web has nothing to narrow.
  assert.equal(policyIdentity({ fetched: false }, sourcesPolicy({ block: ["b.com"] })), null);
});

Deno.test("sourceProblem() takes host names as source lists hold them, and says what a URL's host is", () => {
  for (
    const ok of ["example.com", "Docs.Example.COM", "www.a.com", "127.0.0.1", "[::1]", "a_b.c"]
  ) {
    assert.equal(sourceProblem(ok), null, ok);
  }
  assert.equal(
    sourceProblem("https://docs.example.com/a?b"),
    '"https://docs.example.com/a?b" is a URL: a source is a host name such as "docs.example.com" (it covers its subdomains and every path)',
  );
  for (const bad of ["x.com:8080", "x.com/path", "*.x.com", "a b.com", "bücher.de", "", "."]) {
    assert.match(sourceProblem(bad)!, /is not a host name such as "docs\.example\.com"$/, bad);
  }
});
