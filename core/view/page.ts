/**
 * The viewer's page shell and links: one HTML page per view, the report's style sheet and
 * the viewer's own, every link carrying the viewer's token. All text that reaches a page
 * goes through escapeHtml() (candidates and bundles write it). Pure.
 */
import { escapeHtml, REPORT_STYLE } from "../bench/report_html.ts";
import { formatFixed } from "../bench/format_fixed.ts";

export { escapeHtml };

/** The viewer's routes. */
export type ViewRoute = "/" | "/experiment" | "/experiment/live" | "/attempt" | "/compare";

/** A link to a route of the viewer with its token and parameters, escaped for an attribute. */
export function viewHref(
  token: string,
  route: ViewRoute,
  params: Record<string, string | number | null | undefined> = {},
): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) q.set(k, `${v}`);
  q.set("token", token);
  return escapeHtml(`${route}?${q}`);
}

/** A link element: `text` escaped. */
export function a(href: string, text: string, cls = ""): string {
  return `<a href="${href}"${cls ? ` class="${cls}"` : ""}>${escapeHtml(text)}</a>`;
}

const VIEW_STYLE = `
main { max-width: 1400px; }
nav { font-size: 0.9em; margin-bottom: 0.8em; color: #5b6472; }
nav a { margin-right: 1em; }
.status { font-weight: 600; }
.status.running { color: #8a5a00; }
.status.complete { color: #2f7d5b; }
.status.stopped { color: #a33; }
.cells td a { display: block; text-decoration: none; color: inherit; }
.o-passed { background: #cdeed9; } .o-failed { background: #f6d5d5; }
.o-crashed, .o-timed-out, .o-budget { background: #f3dfc6; } .o-fault { background: #e3d7f2; }
.o-none { color: #8a94a3; }
.pass { color: #2f7d5b; font-weight: 600; } .fail { color: #a33; font-weight: 600; }
pre.diff { padding: 0; } pre.diff span { display: block; padding: 0 12px; }
pre.diff .add { background: #dff3e4; } pre.diff .del { background: #f9e0e0; }
pre.diff .fold { color: #8a94a3; }
.side { display: grid; grid-template-columns: 1fr 1fr; gap: 24px; }
.side > section { min-width: 0; overflow-x: auto; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; }
dl.facts dt { color: #5b6472; } dl.facts dd { margin: 0; }
.entry { border-left: 3px solid #e3e6ea; padding-left: 10px; margin: 8px 0; }
.entry .role { font-weight: 600; }
`;

/** The text of the viewer's one script, which follows a running experiment (see live.ts). */
export interface PageScript {
  nonce: string;
  source: string;
}

/** A whole page: its title, a navigation line, the body (HTML) and an optional script. */
export function pageHtml(
  title: string,
  nav: string,
  body: string,
  script: PageScript | null = null,
): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${REPORT_STYLE}${VIEW_STYLE}</style>
</head>
<body>
<main>
<nav>${nav}</nav>
${body}
</main>
${script ? `<script nonce="${escapeHtml(script.nonce)}">${script.source}</script>\n` : ""}</body>
</html>
`;
}

/** The navigation line: the experiments, then the page's own trail. */
export function navHtml(token: string, trail: string[] = []): string {
  return [a(viewHref(token, "/"), "Experiments"), ...trail].join(" › ");
}

/** "2 s", "350 ms", "1.5 min". */
export function duration(ms: number): string {
  if (ms < 950) return `${Math.round(ms)} ms`;
  if (ms < 90_000) return `${formatFixed(ms / 1000, 1)} s`;
  return `${formatFixed(ms / 60_000, 1)} min`;
}
