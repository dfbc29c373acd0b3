/**
 * The viewer's HTTP side: a handler from Request to Response over open homes, and the
 * server that serves it on 127.0.0.1. Every request needs the viewer's token (`?token=`,
 * 401 without it or with another); a request from a page of another site or addressed to
 * another host name is refused with 403 by the MCP HTTP server's own checks
 * (mcp/loopback.ts). Pages are rendered on the server by core/view/ from what
 * `dvergr experiments`, `dvergr show` and the HTML report read; every page forbids scripts
 * but its own (a Content-Security-Policy with a nonce) and every outside URL.
 *
 * Permissions: --allow-net=127.0.0.1, and what reading the homes needs.
 */
import { DvergrError } from "../core/errors.ts";
import type { Home } from "../core/ports/home.ts";
import type { ExperimentMeta } from "../core/ports/state_store.ts";
import { reportHtmlBody } from "../core/bench/report_html.ts";
import { isRunning, listedExperiments, newestFirst } from "../core/ops/experiment_list.ts";
import { experimentReportParts } from "../core/ops/scorecards.ts";
import { experimentCells, loadAttempt } from "../core/ops/attempts.ts";
import { experimentBundle } from "../core/engine/experiment_bundle.ts";
import { fixturesFor } from "../core/engine/attempt.ts";
import { generatedCaseAgain } from "../core/bundle/generated_cases.ts";
import type { Bundle } from "../core/bundle/types.ts";
import type { CheckerRunner } from "../core/checker.ts";
import type { ExperimentDefinition } from "../core/bench/experiment.ts";
import { type ExperimentRow, experimentsPage } from "../core/view/experiments_page.ts";
import {
  comparePage,
  experimentLive,
  experimentPage,
  type ExperimentPageData,
  liveState,
} from "../core/view/experiment_page.ts";
import { attemptPage } from "../core/view/attempt_page.ts";
import { escapeHtml, navHtml, pageHtml } from "../core/view/page.ts";
import { foreignRequest } from "../mcp/loopback.ts";
import { tokensEqual } from "../mcp/token.ts";

/** A home the viewer reads, and how it is named on its pages. */
export interface ViewHome {
  label: string;
  home: Home;
}

export interface ViewOptions {
  homes: ViewHome[];
  token: string;
  /** The time (ms since the epoch) a lease is compared with; default the system's. */
  now?: () => number;
  /**
   * Runs a bundle's generator (in the checker's sandbox) to make a generated world again for
   * an attempt's files; without it they are compared with the shared fixtures.
   */
  runner?: CheckerRunner;
}

function headers(type: string, nonce: string | null): HeadersInit {
  return {
    "content-type": type,
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; " +
      `script-src ${nonce === null ? "'none'" : `'nonce-${nonce}'`}; connect-src 'self'; ` +
      "img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  };
}

function html(body: string, status = 200, nonce: string | null = null): Response {
  return new Response(body, { status, headers: headers("text/html; charset=utf-8", nonce) });
}

function problem(status: number, message: string, token: string | null): Response {
  const nav = token === null ? "" : navHtml(token);
  return html(
    pageHtml(`${status}`, nav, `<h1>${status}</h1><p>${escapeHtml(message)}</p>`),
    status,
  );
}

/** A found experiment: its home and record. */
interface Found {
  vh: ViewHome;
  meta: ExperimentMeta;
}

/** The viewer's request handler. */
export function viewHandler(opts: ViewOptions): (req: Request) => Promise<Response> {
  const now = opts.now ?? (() => Date.now());
  const token = opts.token;

  async function rows(): Promise<ExperimentRow[]> {
    const out: ExperimentRow[] = [];
    for (const vh of opts.homes) {
      const metas = new Map((await vh.home.state.listExperiments()).map((m) => [m.id, m]));
      for (const l of await listedExperiments(vh.home, vh.label)) {
        out.push({ ...l, status: await statusOf(vh, metas.get(l.experiment)!, l.complete) });
      }
    }
    return newestFirst(out);
  }

  async function statusOf(vh: ViewHome, meta: ExperimentMeta, complete: boolean) {
    if (complete) return "complete" as const;
    return await isRunning(vh.home, meta, now()) ? "running" as const : "stopped" as const;
  }

  async function find(id: string | null): Promise<Found> {
    if (id !== null && id !== "") {
      for (const vh of opts.homes) {
        const meta = await vh.home.state.getExperiment(id);
        if (meta !== null) return { vh, meta };
      }
    }
    throw new DvergrError(
      "NOT_FOUND",
      `No experiment "${id ?? ""}" in ${opts.homes.map((h) => h.label).join(", ")}`,
    );
  }

  /** One experiment's row, its report, cells and the other experiments of its bundle. */
  async function pageData({ vh, meta }: Found): Promise<ExperimentPageData> {
    const listed = (await listedExperiments(vh.home, vh.label, meta.id))[0];
    const row = { ...listed, status: await statusOf(vh, meta, listed.complete) };
    const { scorecard, options } = await experimentReportParts(vh.home, meta);
    const others = newestFirst(
      (await vh.home.state.listExperiments())
        .filter((m) => m.bundleName === meta.bundleName && m.id !== meta.id)
        .map((m) => ({ experiment: m.id, createdAt: m.createdAt })),
    );
    return {
      row,
      report: reportHtmlBody(scorecard, options),
      cells: await experimentCells(vh.home, meta),
      others: others.map((o) => o.experiment),
    };
  }

  async function attempt(q: URLSearchParams): Promise<Response> {
    const found = await find(q.get("id"));
    const rep = q.get("rep") ?? "0";
    if (!/^\d{1,9}$/.test(rep)) return problem(400, `Repetition "${rep}" is not a number`, token);
    const caseId = q.get("case");
    const view = await loadAttempt(found.vh.home, found.meta, {
      candidate: q.get("candidate") ?? "",
      caseId,
      repetition: Number(rep),
    });
    const bundle = await experimentBundle(found.vh.home, found.meta);
    if (bundle === null) return html(attemptPage(token, view, null));
    const world = await worldOf(bundle, found.meta, caseId);
    return html(attemptPage(token, view, world.fixtures, world.note));
  }

  /**
   * The files a cell's world started from: the bundle's (shared fixtures and the case's), or
   * for a generated world the generator's, made again from the experiment's seed.
   */
  async function worldOf(
    bundle: Bundle,
    meta: ExperimentMeta,
    caseId: string | null,
  ): Promise<{ fixtures: Record<string, string>; note?: string }> {
    const def = meta.definition as unknown as ExperimentDefinition;
    const g = def.generated;
    if (!g || caseId === null) return { fixtures: fixturesFor(bundle, caseId) };
    const shared = { fixtures: { ...bundle.fixtures } };
    if (!opts.runner) {
      return { ...shared, note: `Against the shared fixtures only: ${g.file} is not run here.` };
    }
    const set = { split: g.split, count: g.count, seed: g.seed };
    const made = await generatedCaseAgain(bundle, opts.runner, set, caseId, def.params);
    if (!made.ok) {
      return {
        ...shared,
        note:
          `Against the shared fixtures only: ${g.file} could not make ${caseId} again (${made.why}).`,
      };
    }
    return {
      fixtures: { ...bundle.fixtures, ...made.case.fixtures },
      note: `Against the world ${g.file} made for ${caseId} (seed ${g.seed}), made again.`,
    };
  }

  async function route(url: URL): Promise<Response> {
    const q = url.searchParams;
    switch (url.pathname) {
      case "/":
        return html(experimentsPage(token, opts.homes.map((h) => h.label), await rows()));
      case "/experiment": {
        const nonce = crypto.randomUUID().replaceAll("-", "");
        return html(
          experimentPage(token, await pageData(await find(q.get("id"))), nonce),
          200,
          nonce,
        );
      }
      case "/experiment/live": {
        const d = await pageData(await find(q.get("id")));
        const res = html(experimentLive(token, d));
        res.headers.set("x-view-state", liveState(d.row));
        return res;
      }
      case "/attempt":
        return await attempt(q);
      case "/compare": {
        const [left, right] = [await find(q.get("a")), await find(q.get("b"))];
        return html(comparePage(token, await pageData(left), await pageData(right)));
      }
      default:
        return problem(404, `No page ${url.pathname}`, token);
    }
  }

  return async (req: Request): Promise<Response> => {
    // Headers first: a malformed Host makes the request's URL unparsable.
    const foreign = foreignRequest(req);
    if (foreign !== null) return problem(403, foreign, null);
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return problem(400, "The request's URL cannot be read", null);
    }
    if (url.pathname === "/favicon.ico") return new Response(null, { status: 204 });
    if (!tokensEqual(url.searchParams.get("token") ?? "", token)) {
      return problem(
        401,
        "Open the viewer by the URL dvergr view printed: it holds the token",
        null,
      );
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      return problem(405, `The viewer only reads: ${req.method} is refused`, token);
    }
    try {
      return await route(url);
    } catch (e) {
      if (e instanceof DvergrError && (e.code === "NOT_FOUND" || e.code === "USAGE")) {
        return problem(e.code === "NOT_FOUND" ? 404 : 400, e.message, token);
      }
      throw e;
    }
  };
}

export interface ViewServer {
  port: number;
  /** The URL to open, token included. */
  url: string;
  finished: Promise<void>;
  close(): Promise<void>;
}

/** Serves the viewer on 127.0.0.1:`port` (0 picks a free one) until close(). */
export function serveView(
  opts: ViewOptions & { port: number; log: (line: string) => void },
): ViewServer {
  const handle = viewHandler(opts);
  const controller = new AbortController();
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: "127.0.0.1",
      port: opts.port,
      signal: controller.signal,
      onListen: () => {}, // The default prints to stdout.
      onError: (e: unknown) => {
        opts.log(`view request failed: ${e instanceof Error ? e.stack ?? e.message : e}`);
        return problem(500, "The viewer failed on this page (its log says why)", null);
      },
    }, handle);
  } catch (e) {
    if (e instanceof Deno.errors.AddrInUse) {
      throw new DvergrError(
        "USAGE",
        `Cannot listen on 127.0.0.1:${opts.port}: the port is in use`,
        { hint: "Stop what listens there, or choose another port with --port N" },
      );
    }
    throw e;
  }
  const port = server.addr.port;
  return {
    port,
    url: `http://127.0.0.1:${port}/?token=${opts.token}`,
    finished: server.finished,
    async close() {
      controller.abort();
      await server.finished;
    },
  };
}
