/**
 * The benchmark report as one self-contained HTML page: the same blocks as the Markdown
 * report, plus an inline SVG plot of the cost/reward frontier. No scripts, no external
 * assets, so it opens offline and can be attached or published as a single file.
 */
import type { CandidateSummary, Scorecard } from "./scorecard.ts";
import {
  formatFixed,
  type ReportBlock,
  reportBlocks,
  type ReportOptions,
  type ReportTable,
} from "./report.ts";
import { terminalSafe } from "../terminal_safe.ts";

/**
 * Text with &, <, >, " escaped for HTML content and attribute values, and its control
 * characters and bidi overrides shown as escapes (terminalSafe()).
 */
export function escapeHtml(text: string): string {
  // Most text of a report (case ids, numbers, names) has nothing to escape: one test instead
  // of five passes over it.
  if (!NEEDS_ESCAPE.test(text)) return text;
  return terminalSafe(text).replaceAll("&", "&amp;").replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;").replaceAll('"', "&quot;");
}

/** What escapeHtml() changes: &, <, >, " and what terminalSafe() writes as an escape. */
// deno-lint-ignore no-control-regex -- control characters are exactly what is escaped
const NEEDS_ESCAPE = /[&<>"\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** An ASCII punctuation character, which a backslash before it makes literal. */
const PUNCTUATION = /[!-/:-@[-`{-~]/;

/**
 * The report's paragraph markup as HTML: `**bold**`, code spans (fenced by one or more
 * backticks, markdownCodeSpan()) and backslash escapes (markdownSafe()); everything else is
 * text, escaped.
 */
function inline(text: string): string {
  let html = "";
  let bold = false;
  // Plain text is escaped a run at a time, not a character at a time (escapeHtml works on
  // each code unit alone, so the result is the same): a 1,000-case report's per-case table
  // spent ~20 ms in escapeHtml's calls.
  let plain = 0;
  const flush = (to: number) => {
    if (to > plain) html += escapeHtml(text.slice(plain, to));
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== "\\" && c !== "*" && c !== "`") continue;
    flush(i);
    if (c === "\\" && PUNCTUATION.test(text[i + 1] ?? "")) {
      html += escapeHtml(text[++i]);
    } else if (c === "*" && text[i + 1] === "*") {
      html += bold ? "</strong>" : "<strong>";
      bold = !bold;
      i++;
    } else if (c === "`") {
      let n = 1;
      while (text[i + n] === "`") n++;
      const fence = "`".repeat(n);
      const close = closingFence(n);
      close.lastIndex = i + fence.length;
      const end = close.exec(text);
      if (end === null) {
        html += escapeHtml(fence);
      } else {
        let code = text.slice(i + fence.length, end.index);
        if (code.startsWith(" ") && code.endsWith(" ") && code.trim() !== "") {
          code = code.slice(1, -1);
        }
        html += `<code>${escapeHtml(code)}</code>`;
        i = end.index;
      }
      i += fence.length - 1;
    } else html += escapeHtml(c);
    plain = i + 1;
  }
  flush(text.length);
  return bold ? html + "</strong>" : html;
}

/** Closing fences by length (a fence of n backticks alone), made once: one per code span cost. */
const CLOSING_FENCES: RegExp[] = [];

/** The closing fence of a code span opened by `n` backticks: exactly n, not more. */
function closingFence(n: number): RegExp {
  return CLOSING_FENCES[n] ??= new RegExp(`(?<!\`)${"`".repeat(n)}(?!\`)`, "g");
}

/** A background from red (0) through yellow to green (1), light enough for dark text. */
export function heatColour(x: number): string {
  const v = Math.max(0, Math.min(1, x));
  let colour = HEAT_COLOURS.get(v);
  if (colour === undefined) {
    colour = `hsl(${formatFixed(v * 120, 0)} 70% ${formatFixed(82 - 8 * Math.abs(v - 0.5), 0)}%)`;
    // A per-case table shades thousands of cells with a few rewards (0, 1, 0.5…).
    if (HEAT_COLOURS.size < 1000) HEAT_COLOURS.set(v, colour);
  }
  return colour;
}

const HEAT_COLOURS = new Map<number, string>();

function htmlTable(t: ReportTable): string {
  const cls = (i: number) => (t.align[i] === "right" ? ' class="r"' : "");
  const shade = (row: number, i: number) => {
    const v = t.heat?.[row]?.[i];
    return typeof v === "number" ? ` style="background:${heatColour(v)}"` : "";
  };
  const head = t.header.map((h, i) => `<th${cls(i)}>${escapeHtml(h)}</th>`).join("");
  const body = t.rows
    .map((r, row) =>
      `<tr>${r.map((c, i) => `<td${cls(i)}${shade(row, i)}>${escapeHtml(c)}</td>`).join("")}</tr>`
    )
    .join("\n");
  return `<table>\n<thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody>\n</table>`;
}

/** A round upper bound for an axis: 1, 2 or 5 times a power of ten, at least `x`. */
function niceMax(x: number): number {
  if (!(x > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

/** A candidate on the plot: its x (list price per attempt in microdollars, or median time in ms), mean reward and its interval. */
export interface PlotPoint {
  name: string;
  cost: number;
  reward: number;
  low: number;
  high: number;
}

/** Candidates on the frontier: no other is at most as costly and strictly better. */
export function frontierOf(points: readonly PlotPoint[]): PlotPoint[] {
  const sorted = [...points].sort((a, b) => a.cost - b.cost || b.reward - a.reward);
  const out: PlotPoint[] = [];
  let best = -Infinity;
  for (const p of sorted) {
    if (p.reward > best) {
      out.push(p);
      best = p.reward;
    }
  }
  return out;
}

/** The x axis of the frontier plot: what a candidate's x is, how ticks read, what it says. */
interface PlotAxis {
  value(c: CandidateSummary): number | null;
  tick(v: number, max: number): string;
  label: string;
  /** The point's tooltip after its reward. */
  per(v: number): string;
  /** Said below the plot when the axis is not cost (else empty). */
  note: string;
}

const COST_AXIS: PlotAxis = {
  // A model without known prices has no place on a cost axis.
  value: (c) => ((c.cost.unpricedAttempts ?? 0) > 0 ? null : c.cost.listPerAttempt),
  tick: (v, max) => `$${formatFixed(v / 1e6, max < 1e4 ? 5 : 4)}`,
  label: "Cost per attempt (list price)",
  per: (v) => `$${formatFixed(v / 1e6, 4)} per attempt`,
  note: "",
};

const TIME_AXIS: PlotAxis = {
  value: (c) => c.time.medianMs,
  tick: (v, max) => `${formatFixed(v / 1000, max < 10_000 ? 2 : 1)} s`,
  label: "Median time per attempt (every cost is $0)",
  per: (v) => `${formatFixed(v / 1000, 2)} s median per attempt`,
  note: "Every candidate's cost is $0 or unknown, so the plot puts reward against median " +
    "time per attempt instead of cost.",
};

/**
 * The plot's axis: cost (list price per attempt) when some candidate's known cost is above
 * $0, else median time per attempt — on a cost axis every point would sit at $0.
 */
export function plotAxis(candidates: readonly CandidateSummary[]): PlotAxis {
  const costs = candidates.filter((c) => c.meanReward !== null).map(COST_AXIS.value);
  return costs.some((v) => v !== null && v > 0) ? COST_AXIS : TIME_AXIS;
}

/**
 * The reward plot: list price per attempt (x) against mean reward (y) with its 95% interval,
 * the frontier joined by a line; when no cost is above $0, median time per attempt instead,
 * said on the axis and below the plot. Empty when no candidate has both figures.
 */
export function frontierSvg(candidates: readonly CandidateSummary[]): string {
  const axis = plotAxis(candidates);
  const points: PlotPoint[] = candidates
    .filter((c) => c.meanReward !== null && axis.value(c) !== null)
    .map((c) => ({
      name: c.candidate,
      cost: axis.value(c)!,
      reward: c.meanReward!,
      low: c.rewardInterval?.[0] ?? c.meanReward!,
      high: c.rewardInterval?.[1] ?? c.meanReward!,
    }));
  if (points.length === 0) return "";
  const W = 640;
  const H = 360;
  const L = 70;
  const R = 30;
  const T = 20;
  const B = 50;
  const xMax = niceMax(Math.max(...points.map((p) => p.cost)) * 1.05);
  const x = (v: number) => L + (v / xMax) * (W - L - R);
  const y = (v: number) => T + (1 - v) * (H - T - B);
  const f = (v: number) => formatFixed(v, 1);
  const parts: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const yv = i / 4;
    const xv = (xMax * i) / 4;
    parts.push(
      `<line class="grid" x1="${L}" x2="${W - R}" y1="${f(y(yv))}" y2="${f(y(yv))}"/>`,
      `<text class="tick" x="${L - 8}" y="${f(y(yv) + 4)}" text-anchor="end">${
        formatFixed(yv, 2)
      }</text>`,
      `<text class="tick" x="${f(x(xv))}" y="${H - B + 18}" text-anchor="middle">${
        axis.tick(xv, xMax)
      }</text>`,
    );
  }
  parts.push(
    `<line class="axis" x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}"/>`,
    `<line class="axis" x1="${L}" x2="${L}" y1="${T}" y2="${H - B}"/>`,
    `<text class="label" x="${(L + W - R) / 2}" y="${H - 10}" text-anchor="middle">` +
      `${escapeHtml(axis.label)}</text>`,
    `<text class="label" transform="translate(16 ${(T + H - B) / 2}) rotate(-90)" ` +
      'text-anchor="middle">Mean reward (95% interval)</text>',
  );
  const frontier = frontierOf(points);
  if (frontier.length > 1) {
    const pts = frontier.map((p) => `${f(x(p.cost))},${f(y(p.reward))}`).join(" ");
    parts.push(`<polyline class="frontier" points="${pts}"/>`);
  }
  const labels = placeLabels(
    points.map((p) => ({ text: p.name, x: x(p.cost) + 8, y: y(p.reward) - 8 })),
    { top: T + 10, bottom: H - B - 4 },
  );
  points.forEach((p, i) => {
    const cx = f(x(p.cost));
    const name = escapeHtml(p.name);
    parts.push(
      `<line class="whisker" x1="${cx}" x2="${cx}" y1="${f(y(p.low))}" y2="${f(y(p.high))}"/>`,
      `<circle class="point" cx="${cx}" cy="${f(y(p.reward))}" r="5"><title>${name}: reward ${
        formatFixed(p.reward, 3)
      }, ${axis.per(p.cost)}</title></circle>`,
      `<text class="name" x="${f(labels[i].x)}" y="${f(labels[i].y)}">${name}</text>`,
    );
  });
  const against = axis === COST_AXIS ? "cost" : "median time";
  return `<svg class="plot" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" ` +
    `aria-label="Mean reward against ${against} per attempt">\n${parts.join("\n")}\n</svg>` +
    (axis.note ? `\n<p>${escapeHtml(axis.note)}</p>` : "");
}

/** A label to place: its text and where it would like its baseline's start to be. */
export interface LabelSpot {
  text: string;
  x: number;
  y: number;
}

/** Label box size at the plot's 13px font: a generous character width, a line height. */
const CHAR_W = 7.5;
const LINE_H = 15;

function overlaps(a: LabelSpot, b: LabelSpot): boolean {
  return a.x < b.x + b.text.length * CHAR_W && b.x < a.x + a.text.length * CHAR_W &&
    Math.abs(a.y - b.y) < LINE_H;
}

/**
 * Label positions in which no two labels overlap: labels are taken top to bottom (then left
 * to right), and one that would cover a label already placed moves to the nearest free line
 * above or below its point (above first) within the plot, so candidates that share a point
 * get one line each, close to it.
 */
export function placeLabels(
  spots: readonly LabelSpot[],
  bounds: { top: number; bottom: number },
): LabelSpot[] {
  const order = spots.map((s, i) => ({ s, i })).sort((a, b) =>
    a.s.y - b.s.y || a.s.x - b.s.x || a.i - b.i
  );
  const placed: LabelSpot[] = [];
  const out: LabelSpot[] = new Array(spots.length);
  const lines = Math.max(1, Math.floor((bounds.bottom - bounds.top) / LINE_H));
  for (const { s, i } of order) {
    const home = Math.min(bounds.bottom, Math.max(bounds.top, s.y));
    let spot = { ...s, y: home };
    // 0, −1, +1, −2, +2 … lines away; the first that is free and inside the plot.
    for (let k = 0; k <= 2 * (lines + spots.length); k++) {
      const step = k % 2 === 1 ? -(k + 1) / 2 : k / 2;
      const y = home + step * LINE_H;
      if (y < bounds.top || y > bounds.bottom) continue;
      const candidate = { ...s, y };
      if (!placed.some((p) => overlaps(p, candidate))) {
        spot = candidate;
        break;
      }
    }
    placed.push(spot);
    out[i] = spot;
  }
  return out;
}

/** The report page's style sheet (the viewer's pages use it too). */
export const REPORT_STYLE = `
body { font: 15px/1.5 system-ui, sans-serif; color: #1d232b; margin: 0; background: #fafafa; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 32px 48px; background: #fff; }
h1 { font-size: 1.7em; margin: 0.2em 0 0.6em; }
h2 { font-size: 1.25em; margin: 1.6em 0 0.5em; border-bottom: 1px solid #e3e6ea; }
table { border-collapse: collapse; margin: 0.6em 0; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e3e6ea; text-align: left; }
th { background: #f2f4f7; font-weight: 600; }
.r { text-align: right; }
code { background: #f2f4f7; padding: 0 3px; border-radius: 3px; }
pre { background: #f2f4f7; padding: 8px 12px; overflow-x: auto; white-space: pre-wrap; }
.plot { max-width: 100%; height: auto; }
.plot .grid { stroke: #eceff3; }
.plot .axis { stroke: #8a94a3; }
.plot .tick, .plot .label { font-size: 12px; fill: #5b6472; }
.plot .frontier { fill: none; stroke: #2f7d5b; stroke-width: 2; stroke-dasharray: 5 4; }
.plot .whisker { stroke: #3a6ea5; stroke-width: 2; }
.plot .point { fill: #3a6ea5; }
.plot .name { font-size: 13px; fill: #1d232b; }
`;

/** The report's title and its blocks as HTML (the page's body, and the viewer's). */
export function reportHtmlBody(
  scorecard: Scorecard,
  opts: ReportOptions = {},
): { title: string; body: string } {
  const blocks = reportBlocks(scorecard, opts);
  const title = (blocks.find((b) => b.kind === "title") as { text: string }).text;
  const body = blocks.map((b: ReportBlock) => {
    switch (b.kind) {
      case "title":
        return `<h1>${escapeHtml(b.text)}</h1>`;
      case "heading":
        return `<h2>${escapeHtml(b.text)}</h2>`;
      case "paragraph":
        return `<p>${inline(b.text)}</p>`;
      case "table":
        return htmlTable(b.table);
      case "code":
        return `<pre>${escapeHtml(b.text)}</pre>`;
      case "frontier-plot":
        return frontierSvg(scorecard.candidates);
    }
  }).filter((s) => s !== "").join("\n");
  return { title, body };
}

/** The report of a scorecard as a self-contained HTML page with the frontier plot. */
export function renderReportHtml(scorecard: Scorecard, opts: ReportOptions = {}): string {
  const { title, body } = reportHtmlBody(scorecard, opts);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${REPORT_STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}
