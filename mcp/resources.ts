/**
 * Every read op is also a resource: a URI template per op (`room://{room}/files`,
 * `room://{room}/file/{+path}`, `experiment://{room}/progress`, `scorecard://{room}/{experiment}`,
 * …), its optional parameters as a query (`{?offset,limit}`). Reading a resource calls its op
 * with the URI's values, so a resource says exactly what the tool says. A read op without a
 * template of its own here gets `dvergr://op/<name>{?params}`.
 */
import { z } from "zod";
import type { Op } from "../core/ops/op.ts";

/** The templates of the read ops (path part; the query part is derived from the schema). */
const PATHS: Record<string, string> = {
  room_list: "room://rooms",
  room_log: "room://{room}/log",
  room_files: "room://{room}/files",
  room_read: "room://{room}/file/{+path}",
  room_diff: "room://{room}/diff",
  catalog_list: "catalog://{room}/bundles",
  catalog_check: "catalog://{room}/{name}/check",
  catalog_calibrate: "catalog://{room}/{name}/calibration",
  catalog_export: "catalog://{room}/{name}/export",
  job_list: "jobs://list",
  job_status: "job://{job}",
  scorecard_list: "scorecard://{room}",
  scorecard_detail: "scorecard://{room}/{experiment}",
  experiment_report: "experiment://{room}/{experiment}/report",
  experiment_progress: "experiment://{room}/progress",
};

/** Parameters a resource never takes (a read is immediate: job_status's wait is a tool's). */
const NOT_IN_RESOURCES = new Set(["wait_ms"]);

export interface ResourceTemplate {
  op: Op;
  /** RFC 6570 template, e.g. `room://{room}/file/{+path}{?encoding,offset,limit}`. */
  uriTemplate: string;
  /** Variables of the path part, in order. */
  pathVars: string[];
  queryVars: string[];
  /** Matches the path part; groups are the path variables. */
  pattern: RegExp;
  /** Whether the template names a room (subscriptions watch that room). */
  roomVar: boolean;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** The template of a read op. */
export function templateOf(op: Op, pinnedRoom = false): ResourceTemplate {
  const path = PATHS[op.name] ?? `dvergr://op/${op.name}`;
  const pathVars = [...path.matchAll(/\{\+?([a-z_]+)\}/g)].map((m) => m[1]);
  const queryVars = Object.keys(op.input.shape).filter((k) =>
    !pathVars.includes(k) && !NOT_IN_RESOURCES.has(k) && !(pinnedRoom && k === "room")
  );
  let re = "";
  let at = 0;
  for (const m of path.matchAll(/\{(\+?)([a-z_]+)\}/g)) {
    re += escapeRe(path.slice(at, m.index));
    re += m[1] === "+" ? "(.+)" : "([^/?#]+)";
    at = m.index! + m[0].length;
  }
  re += escapeRe(path.slice(at));
  return {
    op,
    uriTemplate: path + (queryVars.length ? `{?${queryVars.join(",")}}` : ""),
    pathVars,
    queryVars,
    pattern: new RegExp(`^${re}$`),
    roomVar: pathVars.includes("room") || queryVars.includes("room"),
  };
}

/** A resource URI matched to its op, with the op's arguments. */
export interface ResourceMatch {
  template: ResourceTemplate;
  args: Record<string, unknown>;
  /** The room it is about, or null (home-wide, e.g. room://rooms or jobs://list). */
  room: string | null;
}

/** A query value as the op's schema wants it: numbers and booleans from their text. */
function coerce(op: Op, key: string, text: string): unknown {
  const field = op.input.shape[key] as z.ZodType | undefined;
  if (!field) return text;
  for (
    const candidate of [
      text,
      Number(text),
      text === "true" ? true : text === "false" ? false : text,
    ]
  ) {
    if (field.safeParse(candidate).success) return candidate;
  }
  return text;
}

/** The op and arguments of a URI among the templates, or null when none matches. */
export function matchResource(templates: ResourceTemplate[], uri: string): ResourceMatch | null {
  const q = uri.indexOf("?");
  const path = q < 0 ? uri : uri.slice(0, q);
  const query = q < 0 ? "" : uri.slice(q + 1);
  for (const t of templates) {
    const m = t.pattern.exec(path);
    if (!m) continue;
    const args: Record<string, unknown> = {};
    try {
      t.pathVars.forEach((v, i) => (args[v] = decodeURIComponent(m[i + 1])));
    } catch {
      return null; // A malformed %-escape names no resource.
    }
    for (const [k, v] of new URLSearchParams(query)) {
      if (!t.queryVars.includes(k)) return null;
      args[k] = coerce(t.op, k, v);
    }
    const room = typeof args.room === "string" ? args.room : null;
    return { template: t, args, room };
  }
  return null;
}

/** A concrete URI of a template (path variables filled, no query). */
export function fillUri(t: ResourceTemplate, values: Record<string, string>): string {
  return t.uriTemplate.replace(/\{\?[^}]*\}$/, "").replace(
    /\{(\+?)([a-z_]+)\}/g,
    (_, plus, k) =>
      plus ? values[k].split("/").map(encodeURIComponent).join("/") : encodeURIComponent(values[k]),
  );
}
