/**
 * The viewer's first page: every experiment of the homes, newest first (bundle, candidates,
 * cells, status, when), each a link to its page, and a form that opens two side by side.
 * Pure.
 */
import { a, escapeHtml, navHtml, pageHtml, viewHref } from "./page.ts";

/** Where an experiment stands: every cell graded, cells running now, or neither. */
export type ExperimentStatus = "complete" | "running" | "stopped";

/** One experiment as the list shows it (what `dvergr experiments` lists, and its status). */
export interface ExperimentRow {
  experiment: string;
  home: string;
  room: string;
  bundle: { name: string; id: string };
  createdAt: string;
  candidates: string[];
  cells: number;
  graded: number;
  status: ExperimentStatus;
}

/** "complete", "running: 3 of 8 cells graded", "stopped: 3 of 8 cells graded". */
export function statusText(r: Pick<ExperimentRow, "status" | "graded" | "cells">): string {
  return r.status === "complete" ? "complete" : `${r.status}: ${r.graded} of ${r.cells} graded`;
}

function when(iso: string): string {
  return iso.slice(0, 19).replace("T", " ");
}

function row(token: string, r: ExperimentRow): string {
  return `<tr><td>${
    a(viewHref(token, "/experiment", { id: r.experiment }), r.experiment.slice(0, 12))
  }` +
    `</td><td>${escapeHtml(when(r.createdAt))}</td><td>${escapeHtml(r.bundle.name)}</td>` +
    `<td>${escapeHtml(r.room)}</td><td>${escapeHtml(r.candidates.join(", "))}</td>` +
    `<td class="r">${r.cells}</td>` +
    `<td class="status ${r.status}">${escapeHtml(statusText(r))}</td></tr>`;
}

function compareForm(token: string, rows: ExperimentRow[]): string {
  if (rows.length < 2) return "";
  const options = (selected: number) =>
    rows.map((r, i) =>
      `<option value="${escapeHtml(r.experiment)}"${i === selected ? " selected" : ""}>${
        escapeHtml(`${r.experiment.slice(0, 8)} ${r.bundle.name} ${when(r.createdAt)}`)
      }</option>`
    ).join("");
  return `<h2>Side by side</h2>
<form method="get" action="/compare">
<input type="hidden" name="token" value="${escapeHtml(token)}">
<select name="a">${options(1)}</select> against <select name="b">${options(0)}</select>
<button type="submit">Compare</button>
</form>`;
}

/** The list page of `rows` (newest first) found in `homes`. */
export function experimentsPage(token: string, homes: string[], rows: ExperimentRow[]): string {
  const body = rows.length === 0
    ? `<h1>Experiments</h1><p>No experiments in ${
      escapeHtml(homes.join(", ") || "this directory")
    }: benchmark a bundle first (<code>dvergr demo</code>, or <code>dvergr benchmark BUNDLE</code>).</p>`
    : `<h1>Experiments</h1>
<p>${rows.length} experiment${rows.length === 1 ? "" : "s"} in ${
      escapeHtml(homes.join(", "))
    }, newest first.</p>
<table class="experiments">
<thead><tr><th>Experiment</th><th>First run</th><th>Bundle</th><th>Room</th><th>Candidates</th><th class="r">Cells</th><th>Status</th></tr></thead>
<tbody>
${rows.map((r) => row(token, r)).join("\n")}
</tbody>
</table>
${compareForm(token, rows)}`;
  return pageHtml("dvergr experiments", navHtml(token), body);
}
