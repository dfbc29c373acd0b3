import assert from "node:assert/strict";
import {
  BRAVE_SEARCH_URL,
  frozenPages,
  frozenPagesProblems,
  frozenTransport,
} from "../../../core/web/frozen.ts";
import { pageText, pageTitle } from "../../../core/web/text.ts";
import { bundleProblems, formatProblem } from "../../../core/bundle/parse.ts";

const WATO =
  "<html><title>Wato</title><script>x()</script><p>Wato is where your team and AI agents work together.</p></html>";

Deno.test("pageText() and pageTitle() follow docs/compatibility.md §9.1/§9.4 on its example", () => {
  assert.equal(pageText(WATO), "Wato Wato is where your team and AI agents work together.");
  assert.equal(pageTitle(WATO), "Wato");
  assert.equal(
    pageText("<style a>p{}</style><NOSCRIPT>n</noscript>Fish&nbsp;&amp;&#160;chips &lt;3\n\n"),
    "Fish & chips &lt;3",
  );
  assert.equal(pageTitle("<p>no title</p>"), null);
});

Deno.test("frozenPages() keeps http and https pages as text, drops search, queries and empty pages; later wins; sorted", () => {
  const pages = frozenPages([
    { "https://wato.example/": WATO, "http://plain.example/": "x", [BRAVE_SEARCH_URL]: "{}" },
    {
      "https://b.example/q?x=1": "query",
      "https://b.example/empty": "<script>only()</script>",
      "https://a.example/": "first",
    },
    { "https://a.example/": "<b>second</b>" + "y".repeat(60_000) },
  ]);
  // An http page is kept as an https one is: show lists both, so freeze keeps both.
  assert.deepEqual(Object.keys(pages), [
    "http://plain.example/",
    "https://a.example/",
    "https://wato.example/",
  ]);
  assert.deepEqual(pages["http://plain.example/"], { title: "http://plain.example/", body: "x" });
  assert.deepEqual(pages["https://wato.example/"], {
    title: "Wato",
    body: "Wato Wato is where your team and AI agents work together.",
  });
  assert.equal(pages["https://a.example/"].title, "https://a.example/");
  assert.equal(pages["https://a.example/"].body.length, 50_000);
  assert.match(pages["https://a.example/"].body, /^second y/);
});

const PAGES = {
  "https://a.example/": { title: "Alpha widgets", body: "Alpha makes blue widgets." },
  "https://b.example/": { title: "Beta", body: "Beta makes widgets and gadgets, blue ones." },
  "https://c.example/": { title: "Gamma", body: "Nothing here." },
};

Deno.test("frozenTransport() answers every docs/compatibility.md §9.4 status code and message", () => {
  const t = frozenTransport(PAGES);
  const get = (url: string) => t({ method: "GET", url });
  assert.deepEqual(t({ method: "POST", url: "https://a.example/" }), {
    status: 405,
    contentType: "text/plain; charset=utf-8",
    body: "Frozen web only supports GET",
  });
  assert.deepEqual(
    [
      t({ method: "GET", url: "https://a.example/", body: "x" }).status,
      t({ method: "GET", url: "https://a.example/", body: "x" }).body,
    ],
    [400, "GET bodies are unsupported"],
  );
  for (
    const q of [
      "",
      "?count=3",
      "?q=",
      "?q=a&count=0",
      "?q=a&count=51",
      "?q=a&count=x",
      "?q=a&country=DE",
      "?q=a&lang=en",
      "?q=a&q=b",
      `?q=${"a".repeat(4097)}`,
    ]
  ) {
    const r = get(`${BRAVE_SEARCH_URL}${q}`);
    assert.deepEqual([r.status, r.body], [400, "Unsupported frozen search parameters"], q);
  }
  const found = get(`${BRAVE_SEARCH_URL}?q=blue+widgets+gadgets&country=US`);
  assert.equal(found.status, 200);
  assert.deepEqual(JSON.parse(found.body), {
    web: {
      results: [
        {
          url: "https://b.example/",
          title: "Beta",
          description: "Beta makes widgets and gadgets, blue ones.",
        },
        {
          url: "https://a.example/",
          title: "Alpha widgets",
          description: "Alpha makes blue widgets.",
        },
      ],
    },
  });
  const one = JSON.parse(get(`${BRAVE_SEARCH_URL}?q=BLUE&count=1`).body);
  assert.deepEqual(one.web.results.map((r: { url: string }) => r.url), ["https://a.example/"]);
  assert.deepEqual(JSON.parse(get(`${BRAVE_SEARCH_URL}?q=zebra`).body), { web: { results: [] } });
  assert.deepEqual([get("https://a.example/?x=1").status, get("https://a.example/?x=1").body], [
    400,
    "Frozen pages do not support query parameters",
  ]);
  assert.deepEqual([get("https://a.example/").status, get("https://a.example/").body], [
    200,
    "Alpha makes blue widgets.",
  ]);
  assert.deepEqual([get("https://a.example").status, get("https://a.example").body], [
    404,
    "Not present in frozen web",
  ]);
  assert.equal(get("https://d.example/").status, 404);
});

Deno.test("frozenTransport() refuses pages that are not http(s) URLs to exactly {title, body}", () => {
  for (
    const bad of [{}, { "ftp://a.example/": { title: "", body: "" } }, {
      "https://a.example/": { title: "t", body: "b", extra: 1 },
    }, { "https://a.example/": { title: 1, body: "b" } }]
  ) {
    assert.throws(
      () => frozenTransport(bad as never),
      /Expected frozen HTTPS pages with title and body/,
    );
  }
  assert.deepEqual(frozenPagesProblems({ "https://a.example/#x": { title: "t", body: "b" } }), [
    '"https://a.example/#x": expected an http(s) URL without query or fragment',
  ]);
});

Deno.test("bundleProblems() shape-checks web.edn: http(s) URLs without query or fragment, {:title :body} strings, at least one page", () => {
  const problems = (web: string) =>
    bundleProblems(
      new Map([
        ["workflow.edn", '{:title "T" :task "t" :web :frozen}'],
        ["checker.js", "export function check() {}"],
        ["fixtures/a.md", "a"],
        ["web.edn", web],
      ]),
    ).map(formatProblem);
  assert.deepEqual(problems('{"https://a.example/" {:title "A" :body "a"}}'), []);
  assert.deepEqual(problems('{"http://a.example/" {:title "A" :body "a"}}'), []);
  assert.match(problems("{}").join("\n"), /web\.edn.*expected at least one page/);
  assert.match(
    problems('{"https://a.example/?q=1" {:title "A" :body "a"}}').join("\n"),
    /without query or fragment/,
  );
  assert.match(
    problems('{"https://a.example/#top" {:title "A" :body "a"}}').join("\n"),
    /without query or fragment/,
  );
  assert.match(problems('{"https://a.example/" {:title "A"}}').join("\n"), /web\.edn/);
  assert.match(problems('{"https://a.example/" {:title "A" :body 1}}').join("\n"), /web\.edn/);
  assert.match(
    problems(`{"https://a.example/" {:title "A" :body "${"x".repeat(50_001)}"}}`).join("\n"),
    /at most 50000 characters/,
  );
});

Deno.test("frozenTransport() serves a frozen http page at its http URL only", () => {
  const t = frozenTransport({ "http://plain.example/a": { title: "Plain", body: "plain text" } });
  const r = t({ method: "GET", url: "http://plain.example/a" });
  assert.equal(r.status, 200);
  assert.match(r.body, /plain text/);
  assert.equal(t({ method: "GET", url: "https://plain.example/a" }).status, 404);
});
