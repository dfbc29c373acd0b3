/**
 * An experiment's page: its report (scorecard, frontier plot, paired comparisons, where
 * answers fail, per-case heat map, item analysis: the HTML report's own blocks) and every
 * cell as a link to its attempt, coloured by outcome. While the experiment runs, a small
 * inline script asks for the page's live part again and puts it in place when it changed.
 * Pure.
 */
import type { Outcome } from "../bench/outcome.ts";
import { OUTCOME_TEXT } from "../bench/outcome.ts";
import { formatFixed } from "../bench/format_fixed.ts";
import { type ExperimentRow, statusText } from "./experiments_page.ts";
import { a, escapeHtml, navHtml, pageHtml, type PageScript, viewHref } from "./page.ts";

/** A cell of the experiment and how its latest try ended (`dvergr show`'s cells). */
export interface CellRow {
  candidate: string;
  case: string | null;
  repetition: number;
  outcome: Outcome | null;
  reward: number | null;
  cause: string | null;
}

/** What an experiment's page shows. */
export interface ExperimentPageData {
  row: ExperimentRow;
  /** The report's blocks as HTML (reportHtmlBody()). */
  report: { title: string; body: string };
  /** Every planned cell, in plan order. */
  cells: CellRow[];
  /** The ids of other experiments of the same bundle, newest first (to compare with). */
  others: string[];
}

/** Cells shown in the grid; the rest are counted. */
export const GRID_CELLS = 3000;

/** The state the live script compares: it changes when a cell is graded or the status moves. */
export function liveState(row: ExperimentRow): string {
  return `${row.status}:${row.graded}`;
}

function cellLink(token: string, id: string, c: CellRow): string {
  const href = viewHref(token, "/attempt", {
    id,
    candidate: c.candidate,
    case: c.case,
    rep: c.repetition,
  });
  if (c.outcome === null) return `<td class="o-none">not run</td>`;
  const text = c.reward === null
    ? OUTCOME_TEXT[c.outcome]
    : `${OUTCOME_TEXT[c.outcome]} ${formatFixed(c.reward, 2)}`;
  const title = c.cause ? ` title="${escapeHtml(c.cause)}"` : "";
  return `<td class="o-${c.outcome}"${title}>${a(href, text)}</td>`;
}

/** The cells as a grid: a row per case and repetition, a column per candidate. */
function cellGrid(token: string, d: ExperimentPageData): string {
  const { candidates, experiment } = d.row;
  const shown = d.cells.slice(0, GRID_CELLS);
  const rows: string[] = [];
  for (let k = 0; k < shown.length; k += candidates.length) {
    const line = shown.slice(k, k + candidates.length);
    const first = line[0];
    rows.push(
      `<tr><td>${
        escapeHtml(first.case ?? "(the environment)")
      }</td><td class="r">${first.repetition}</td>${
        line.map((c) => cellLink(token, experiment, c)).join("")
      }</tr>`,
    );
  }
  const more = d.cells.length - shown.length;
  return `<h2>Cells</h2>
<p>Every attempt: its outcome and reward; open one for its checks, files, transcript and output.${
    more > 0 ? ` The first ${shown.length} cells are shown of ${d.cells.length}.` : ""
  }</p>
<table class="cells">
<thead><tr><th>Case</th><th class="r">Rep.</th>${
    candidates.map((c) => `<th>${escapeHtml(c)}</th>`).join("")
  }</tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table>`;
}

/** The part of the page that follows the experiment: its status, report and cells. */
export function experimentLive(token: string, d: ExperimentPageData): string {
  const r = d.row;
  return `<p>Bundle <strong>${escapeHtml(r.bundle.name)}</strong> (${
    escapeHtml(r.bundle.id.slice(0, 12))
  }) in room ${escapeHtml(r.room)}, first run ${escapeHtml(r.createdAt)}; ${r.cells} cells, ` +
    `<span class="status ${r.status}">${escapeHtml(statusText(r))}</span>.</p>
${d.report.body}
${cellGrid(token, d)}`;
}

/** The script that follows a running experiment: it asks for the live part every 1.5 s. */
export const LIVE_SCRIPT = `(() => {
  const box = document.getElementById("live");
  let state = box.dataset.state;
  const tick = async () => {
    try {
      const r = await fetch(box.dataset.live, { cache: "no-store" });
      const next = r.headers.get("x-view-state");
      if (r.ok && next !== null && next !== state) {
        box.innerHTML = await r.text();
        state = next;
        box.dataset.state = next;
      }
      if (next !== null && next.startsWith("complete:")) return;
    } catch (_) {
      // The viewer stopped or is busy: ask again.
    }
    setTimeout(tick, 1500);
  };
  setTimeout(tick, 1500);
})();`;

/** The experiment's page; `nonce` lets its live script run while it is not complete. */
export function experimentPage(token: string, d: ExperimentPageData, nonce: string): string {
  const r = d.row;
  const compare = d.others.length === 0
    ? ""
    : `<p>Compare with: ${
      d.others.slice(0, 5).map((o) =>
        a(
          viewHref(token, "/compare", { a: o, b: r.experiment }),
          o.slice(0, 8),
        )
      ).join(", ")
    } (other experiments of ${escapeHtml(r.bundle.name)}).</p>`;
  const live = viewHref(token, "/experiment/live", { id: r.experiment });
  const body = `<h1>Experiment ${escapeHtml(r.experiment.slice(0, 12))}</h1>
${compare}
<div id="live" data-state="${escapeHtml(liveState(r))}" data-live="${live}">
${experimentLive(token, d)}
</div>`;
  const script: PageScript | null = r.status === "complete" ? null : { nonce, source: LIVE_SCRIPT };
  return pageHtml(
    `${r.bundle.name} ${r.experiment.slice(0, 8)}`,
    navHtml(token, [escapeHtml(r.experiment.slice(0, 8))]),
    body,
    script,
  );
}

/** Two experiments side by side: each one's status, report and cells. */
export function comparePage(token: string, left: ExperimentPageData, right: ExperimentPageData) {
  const side = (d: ExperimentPageData) =>
    `<section><h2>${
      a(
        viewHref(token, "/experiment", { id: d.row.experiment }),
        `${d.row.bundle.name} ${d.row.experiment.slice(0, 8)}`,
      )
    }</h2>
${experimentLive(token, d)}
</section>`;
  return pageHtml(
    `${left.row.experiment.slice(0, 8)} and ${right.row.experiment.slice(0, 8)}`,
    navHtml(token, ["Side by side"]),
    `<h1>Side by side</h1>
<div class="side">
${side(left)}
${side(right)}
</div>`,
  );
}
