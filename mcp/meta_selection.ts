/**
 * The tool selection a request asks for in its `_meta` (`dvergr/profile`, `dvergr/toolsets`,
 * `dvergr/tools`, `dvergr/room`): a stateless request's for itself, a handshake client's in
 * its initialize for the connection. It narrows what the server serves, never widens it.
 */
import { allOps } from "../core/ops/registry.ts";
import { isDvergrError } from "../core/errors.ts";
import { type Selection, type SelectionRequest, selectTools } from "./selection.ts";
import { type JsEvalRunner, reachOf } from "./code_profile.ts";
import { INVALID_PARAMS, ProtocolError } from "./surface.ts";

function stringList(v: unknown, field: string): string[] | undefined {
  if (v === undefined) return undefined;
  if (typeof v === "string") return [v];
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v;
  throw new ProtocolError(INVALID_PARAMS, `_meta ${field} must be text or a list of text`);
}

/** The selection a request asks for in _meta, or null when it asks for none. */
export function requestedSelection(meta: Record<string, unknown>): SelectionRequest | null {
  const profile = meta["dvergr/profile"];
  const room = meta["dvergr/room"];
  if (profile !== undefined && typeof profile !== "string") {
    throw new ProtocolError(INVALID_PARAMS, "_meta dvergr/profile must be text");
  }
  if (room !== undefined && typeof room !== "string") {
    throw new ProtocolError(INVALID_PARAMS, "_meta dvergr/room must be text");
  }
  const req: SelectionRequest = {
    profile,
    toolsets: stringList(meta["dvergr/toolsets"], "dvergr/toolsets"),
    tools: stringList(meta["dvergr/tools"], "dvergr/tools"),
    room,
  };
  return Object.values(req).every((v) => v === undefined) ? null : req;
}

/**
 * The selection `asked` within what `server` serves, or a ProtocolError (-32602) naming what
 * lies outside it. js_eval's programs count as reaching the ops they may call.
 */
export function narrowSelection(
  server: Selection,
  asked: SelectionRequest,
  opts: { jsEval?: JsEvalRunner } = {},
): Selection {
  let selection: Selection;
  try {
    selection = selectTools(allOps(), asked, opts);
  } catch (e) {
    if (isDvergrError(e)) throw new ProtocolError(INVALID_PARAMS, e.message, { hint: e.hint });
    throw e;
  }
  const served = new Set(server.ops.flatMap((o) => [o.name, ...reachOf(o)]));
  const outside = [
    ...new Set(
      selection.ops.flatMap((o) => [o.name, ...reachOf(o)]).filter((n) =>
        !served.has(n) && !(n === "js_eval" || n === "describe")
      ),
    ),
  ];
  if (outside.length > 0) {
    throw new ProtocolError(
      INVALID_PARAMS,
      `Cannot select ${outside.join(", ")}: this server serves ${server.label}`,
    );
  }
  if (server.room !== null && selection.room !== server.room) {
    throw new ProtocolError(
      INVALID_PARAMS,
      `This server works in room ${server.room} only: pin dvergr/room to it`,
    );
  }
  return selection;
}
