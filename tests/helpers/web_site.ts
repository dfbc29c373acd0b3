/**
 * A small website and a Brave-compatible search endpoint on 127.0.0.1 for web tests:
 * pages, a redirect, a redirect loop, a slow page that never answers, a huge page, a
 * redirect into another host, and `/res/v1/web/search` answering from the site's pages
 * (requires the key given). Every request is logged.
 */

export interface WebSite {
  /** http(s)://127.0.0.1:PORT */
  url: string;
  port: number;
  /** Paths requested, in order (search requests with their query). */
  requests: string[];
  close(): Promise<void>;
}

/** HTML pages of the site by path. */
export const SITE_PAGES: Record<string, string> = {
  "/":
    "<html><title>Acme Tools</title><body><h1>Acme</h1><p>Acme makes hammers &amp; saws for carpenters.</p></body></html>",
  "/rivals":
    "<html><title>Rivals</title><script>track()</script><p>Bolt Hardware sells drills.</p><p>Nail &amp; Co sells nails.</p></html>",
  "/bolt":
    "<html><title>Bolt Hardware</title><p>Bolt Hardware: cordless drills for every workshop since 1999.</p></html>",
  "/secret":
    "<html><title>Answer key</title><p>The competitors are Bolt Hardware and Nail &amp; Co.</p></html>",
};

/** The test CA (tests/fixtures/tls/ca.pem) that signed the site's certificate. */
export const TEST_CA_PATH = new URL("../fixtures/tls/ca.pem", import.meta.url).pathname;

/** fetch() that trusts the test CA, as DENO_CERT would. */
export function fetchTrustingTestCa(): typeof fetch {
  const client = Deno.createHttpClient({ caCerts: [Deno.readTextFileSync(TEST_CA_PATH)] });
  return (input, init) => fetch(input, { ...init, client });
}

/** Starts the site; with `tls` it serves https with the test CA's certificate. */
export function startWebSite(
  opts: { braveKey?: string; hugeBytes?: number; tls?: boolean } = {},
): Promise<WebSite> {
  const scheme = opts.tls ? "https" : "http";
  const tls = opts.tls
    ? {
      cert: Deno.readTextFileSync(new URL("../fixtures/tls/server.pem", import.meta.url)),
      key: Deno.readTextFileSync(new URL("../fixtures/tls/server-key.pem", import.meta.url)),
    }
    : {};
  const requests: string[] = [];
  const hang = new Set<() => void>();
  const ac = new AbortController();
  let port = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {}, ...tls },
    (req) => {
      const u = new URL(req.url);
      requests.push(u.pathname + u.search);
      if (u.pathname === "/res/v1/web/search") {
        if (opts.braveKey && req.headers.get("x-subscription-token") !== opts.braveKey) {
          return new Response(JSON.stringify({ error: "bad token" }), { status: 401 });
        }
        const q = (u.searchParams.get("q") ?? "").toLowerCase().split(/\W+/).filter(Boolean);
        const count = Number(u.searchParams.get("count") ?? "5");
        const results = Object.entries(SITE_PAGES)
          .filter(([, html]) => q.some((t) => html.toLowerCase().includes(t)))
          .slice(0, count)
          .map(([path, html]) => ({
            url: `${scheme}://127.0.0.1:${port}${path}`,
            title: /<title>(.*?)<\/title>/.exec(html)?.[1] ?? path,
            description: `A page about <strong>${q.join(" ")}</strong>`,
          }));
        return Response.json({ type: "search", web: { results } });
      }
      if (u.pathname === "/moved") {
        return Response.redirect(`${scheme}://127.0.0.1:${port}/bolt`, 302);
      }
      if (u.pathname === "/loop") {
        return Response.redirect(`${scheme}://127.0.0.1:${port}/loop`, 302);
      }
      if (u.pathname === "/to-localhost") {
        return Response.redirect(`${scheme}://localhost:${port}/secret`, 301);
      }
      if (u.pathname === "/missing") return new Response("<p>no such page</p>", { status: 404 });
      if (u.pathname === "/slow") {
        return new Promise<Response>((resolve) => {
          const done = () => resolve(new Response("late"));
          hang.add(done);
          req.signal.addEventListener("abort", () => {
            hang.delete(done);
            done();
          });
        });
      }
      if (u.pathname === "/huge") {
        const size = opts.hugeBytes ?? 8_000_000;
        const chunk = new TextEncoder().encode("<p>" + "x".repeat(16_380) + "</p>\n");
        let sent = 0;
        return new Response(
          new ReadableStream({
            pull(c) {
              if (sent >= size) return c.close();
              c.enqueue(chunk);
              sent += chunk.length;
            },
          }),
          { headers: { "content-type": "text/html" } },
        );
      }
      const page = SITE_PAGES[u.pathname];
      return page === undefined
        ? new Response("not found", { status: 404 })
        : new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } });
    },
  );
  port = (server.addr as Deno.NetAddr).port;
  return Promise.resolve({
    url: `${scheme}://127.0.0.1:${port}`,
    port,
    requests,
    async close() {
      for (const h of hang) h();
      ac.abort();
      await server.finished;
    },
  });
}
