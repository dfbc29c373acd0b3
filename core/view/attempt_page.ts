/**
 * One attempt's page (what `dvergr show EXP/CANDIDATE/CASE/REP` shows, from the same view
 * model): outcome and cause, the verdict's checks, the files it left against the world's
 * fixtures (a line diff), a command's exit and output, the model transcript with its tool
 * calls, the world gateway's calls, fetched pages, the judge's questions and answers,
 * cost and times. Every text is escaped. Pure.
 */
import type { AttemptView } from "../bench/attempt_view.ts";
import { OUTCOME_TEXT } from "../bench/outcome.ts";
import { formatFixed } from "../bench/format_fixed.ts";
import { lineDiff } from "./line_diff.ts";
import { a, duration, escapeHtml, navHtml, pageHtml, viewHref } from "./page.ts";

function money(micros: number): string {
  return "$" + formatFixed(micros / 1e6, 4);
}

function facts(pairs: [string, string][]): string {
  return `<dl class="facts">${
    pairs.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${v}</dd>`).join("")
  }</dl>`;
}

function pre(text: string): string {
  return `<pre>${escapeHtml(text === "" ? "(empty)" : text)}</pre>`;
}

function summary(v: AttemptView): string {
  const t = v.cost.tokens;
  return facts([
    [
      "Outcome",
      `<span class="o-${v.outcome}">${escapeHtml(OUTCOME_TEXT[v.outcome])}</span>${
        v.cause ? `: ${escapeHtml(v.cause)}` : ""
      }`,
    ],
    ["Try", `${v.tryNo}`],
    [
      "Started",
      `${escapeHtml(v.startedAt)}, took ${duration(v.elapsedMs)}${
        v.isolated ? "" : " (not isolated)"
      }`,
    ],
    [
      "Cost",
      v.cost.unpriced
        ? "unknown (the model has no prices in the registry)"
        : `${money(v.cost.listMicros)} list price, ${money(v.cost.billedMicros)} billed`,
    ],
    ["Tokens", `${t.input} in (${t.cacheRead} cached), ${t.output} out`],
    ...(v.fault
      ? [["Fault", escapeHtml(`${v.fault.source} ${v.fault.kind}: ${v.fault.message}`)] as [
        string,
        string,
      ]]
      : []),
    ...(v.failure
      ? [["Failure", escapeHtml(`${v.failure.kind}: ${v.failure.message}`)] as [string, string]]
      : []),
  ]);
}

function checks(v: AttemptView): string {
  if (!v.verdict) {
    return "<h2>Verdict</h2><p>None: the attempt faulted; a rerun tries the cell again.</p>";
  }
  const rows = Object.entries(v.verdict.checks).map(([k, ok]) =>
    `<tr><td>${escapeHtml(":" + k)}</td><td class="${ok === true ? "pass" : "fail"}">${
      ok === true ? "pass" : "FAIL"
    }</td></tr>`
  );
  return `<h2>Verdict</h2><p>Reward ${formatFixed(v.verdict.reward, 3)} (verifier ${
    escapeHtml(v.trust)
  }).</p>
<table class="checks"><thead><tr><th>Check</th><th>Result</th></tr></thead><tbody>
${rows.join("\n")}
</tbody></table>`;
}

/** One captured file against the fixture at its path (all added when there is none). */
function fileDiff(path: string, text: string, fixture: string | undefined): string {
  const head = `<h3>${escapeHtml(path)}</h3>`;
  if (fixture === undefined) {
    return `${head}<p>Not in the fixtures: the attempt wrote it.</p>
<pre class="diff">${
      text.split("\n").map((l) => `<span class="add">+ ${escapeHtml(l)}</span>`).join("")
    }</pre>`;
  }
  const diff = lineDiff(fixture, text);
  if (diff.length === 0) return `${head}<p>Unchanged from the fixture.</p>`;
  const lines = diff.map((l) =>
    l.op === "…"
      ? `<span class="fold">… ${l.folded} unchanged line${l.folded === 1 ? "" : "s"}</span>`
      : `<span class="${l.op === "+" ? "add" : l.op === "-" ? "del" : ""}">${l.op} ${
        escapeHtml(l.text)
      }</span>`
  );
  return `${head}<p>Against the fixture:</p><pre class="diff">${lines.join("")}</pre>`;
}

function files(v: AttemptView, fixtures: Record<string, string> | null, note?: string): string {
  const paths = Object.keys(v.captured).sort();
  const parts = [
    `<h2>Files</h2><p>${
      paths.length === 0
        ? "None captured."
        : `${paths.length} captured${
          fixtures === null ? " (the bundle's fixtures are not in this home: shown whole)" : ""
        }.`
    }${note ? ` ${escapeHtml(note)}` : ""}</p>`,
  ];
  for (const p of paths) parts.push(fileDiff(p, v.captured[p], fixtures?.[p]));
  for (const s of v.skipped) {
    parts.push(`<p>${escapeHtml(s.path)}: not kept (${escapeHtml(s.reason)})</p>`);
  }
  return parts.join("\n");
}

function processPart(v: AttemptView): string {
  const p = v.process;
  if (!p) return "";
  const exit = p.signal
    ? `killed by ${p.signal}`
    : p.exitCode !== null
    ? `exit status ${p.exitCode}`
    : "—";
  return `<h2>Process</h2>${
    facts([
      ["Exit", escapeHtml(exit + (p.timedOut ? " (stopped at the time limit)" : ""))],
      ...(p.command
        ? [["Command", `<code>${escapeHtml(p.command)}</code>`] as [string, string]]
        : []),
    ])
  }
<h3>stdout (${p.stdoutBytes ?? "?"} bytes; the tail)</h3>${pre(p.stdoutTail)}
<h3>stderr (${p.stderrBytes ?? "?"} bytes; the tail)</h3>${pre(p.stderrTail)}`;
}

function str(v: unknown): string {
  return typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v);
}

function transcriptEntry(e: Record<string, unknown>): string {
  const role = str(e.role) || "?";
  const parts: string[] = [];
  if (typeof e.text === "string" && e.text !== "") parts.push(pre(e.text));
  for (const c of Array.isArray(e.toolCalls) ? e.toolCalls : []) {
    const x = (c ?? {}) as Record<string, unknown>;
    parts.push(`<p>calls <code>${escapeHtml(str(x.name))}</code></p>${pre(str(x.arguments))}`);
  }
  for (const r of Array.isArray(e.results) ? e.results : []) {
    const x = (r ?? {}) as Record<string, unknown>;
    parts.push(
      `<p>result of <code>${escapeHtml(str(x.name))}</code>${x.isError ? " (error)" : ""}</p>${
        pre(str(x.content))
      }`,
    );
  }
  if (role === "error") parts.push(pre(str(e.message)));
  return `<div class="entry"><span class="role">${escapeHtml(role)}</span>${parts.join("")}</div>`;
}

function modelPart(v: AttemptView): string {
  const m = v.model;
  if (!m) return "";
  return `<h2>Model transcript</h2><p>${escapeHtml(m.model ?? "?")} (${
    escapeHtml(m.provider ?? "?")
  }): ${m.calls ?? 0} calls, ${m.toolCalls ?? 0} tool calls (${
    m.toolErrors ?? 0
  } errors), stopped: ${escapeHtml(m.stop ?? "?")}.</p>
${m.transcript.map(transcriptEntry).join("\n")}${
    m.omitted > 0 ? `<p>… ${m.omitted} more entries not kept.</p>` : ""
  }`;
}

function gatewayPart(v: AttemptView): string {
  const g = v.gateway;
  if (!g) return "";
  const rows = g.events.map((e) =>
    e.kind === "mcp"
      ? `<tr><td class="r">${formatFixed(e.at / 1000, 1)} s</td><td>MCP</td><td><code>${
        escapeHtml(e.tool)
      }</code> ${escapeHtml(e.args)}</td><td>${e.resultChars} characters${
        e.isError ? " (error)" : ""
      }</td></tr>`
      : `<tr><td class="r">${formatFixed(e.at / 1000, 1)} s</td><td>model</td><td>${
        escapeHtml(`${e.request}${e.model ? ` ${e.model}` : ""}`)
      }</td><td>${e.status}${e.refused ? ` refused: ${escapeHtml(e.refused)}` : ""}${
        e.input !== null ? ` (${e.input} in, ${e.output ?? 0} out)` : ""
      }</td></tr>`
  );
  const notes = [
    g.stopped ? `stopped: ${g.stopped}` : "",
    g.fault ? `fault: ${g.fault}` : "",
    g.upstreamProblem ? `provider: ${g.upstreamProblem}` : "",
  ].filter((n) => n !== "");
  const agent = g.agent
    ? `<h3>${escapeHtml(g.agent.cli)} result</h3>${pre(JSON.stringify(g.agent.result, null, 2))}`
    : "";
  return `<h2>Gateway</h2><p>${g.events.length} calls${
    notes.length ? `; ${escapeHtml(notes.join("; "))}` : ""
  }${g.omitted > 0 ? `; ${g.omitted} more not shown` : ""}.</p>
${
    rows.length === 0
      ? ""
      : `<table><thead><tr><th class="r">At</th><th>Kind</th><th>Call</th><th>Answer</th></tr></thead><tbody>
${rows.join("\n")}
</tbody></table>`
  }${agent}`;
}

function webPart(v: AttemptView): string {
  const parts: string[] = [];
  if (v.web) {
    const d = Object.entries(v.web.denials).filter(([, n]) => (n ?? 0) > 0)
      .map(([k, n]) => `${n} ${k}`);
    parts.push(
      `<h2>Web</h2><p>${
        escapeHtml(v.web.mode)
      }: ${v.web.searches} searches, ${v.web.requests} requests, ${v.web.pages} pages${
        d.length > 0 ? `; refused: ${escapeHtml(d.join(", "))}` : ""
      }.</p>`,
    );
  }
  if (v.fetched.length > 0) {
    parts.push(`<h2>Fetched pages</h2>`);
    for (const p of v.fetched) {
      parts.push(
        `<details><summary>${escapeHtml(p.url)}${
          p.title ? ` — ${escapeHtml(p.title)}` : ""
        } (${p.chars} characters)</summary>${pre(p.text)}</details>`,
      );
    }
  }
  return parts.join("\n");
}

function judgePart(v: AttemptView): string {
  if (!v.judge && v.judged.length === 0) return "";
  const head = v.judge
    ? `<p>${escapeHtml(v.judge.model)}: ${v.judge.calls} calls, ${
      money(v.judge.listMicros ?? v.judge.billedMicros)
    }.</p>`
    : "";
  const qa = v.judged.map((q) =>
    `<div class="entry"><span class="role">asked ${escapeHtml(q.id)}</span>${pre(q.question)}` +
    `<span class="role">answer</span>${q.answer === null ? "<p>none</p>" : pre(q.answer)}</div>`
  );
  return `<h2>Judge</h2>${head}${qa.join("\n")}`;
}

/**
 * The attempt's page; `fixtures` is the world the cell started from (null when unknown), and
 * `worldNote` says where it came from when that is not the bundle's files as they are (a
 * generated world made again).
 */
export function attemptPage(
  token: string,
  v: AttemptView,
  fixtures: Record<string, string> | null,
  worldNote?: string,
): string {
  const cell = `${v.candidate}${v.case === null ? "" : ` / ${v.case}`} / ${v.repetition}`;
  const body = `<h1>${escapeHtml(cell)}</h1>
<p>Attempt of experiment ${
    a(viewHref(token, "/experiment", { id: v.experiment }), v.experiment.slice(0, 12))
  }.</p>
${summary(v)}
${checks(v)}
${files(v, fixtures, worldNote)}
${processPart(v)}
${modelPart(v)}
${gatewayPart(v)}
${webPart(v)}
${judgePart(v)}
${
    v.evidenceMissing
      ? `<p>Evidence blob ${escapeHtml(v.evidenceRef ?? "")} is missing from the home.</p>`
      : ""
  }`;
  return pageHtml(
    cell,
    navHtml(token, [
      a(viewHref(token, "/experiment", { id: v.experiment }), v.experiment.slice(0, 8)),
      escapeHtml(cell),
    ]),
    body,
  );
}
