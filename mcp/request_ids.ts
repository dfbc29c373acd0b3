/**
 * One request per id at a time on a connection. The SDK keeps a connection's requests by
 * their JSON-RPC id: over stdio two requests with one id both run and both answers carry it
 * (the client cannot tell them apart), and over Streamable HTTP the second POST takes the
 * id's stream from the first, which then waits for ever. A request whose id is in flight is
 * answered here with an error (-32600) and never reaches the SDK; the id is free again once
 * its answer is sent, or when the client cancels it (a cancelled request gets no answer).
 */
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

type Id = string | number;

/** The key of an id: 7 and "7" are two ids. */
function keyOf(id: Id): string {
  return `${typeof id}:${id}`;
}

/** The id of a request (a message with a method and an id), else null. */
export function requestId(m: unknown): Id | null {
  if (typeof m !== "object" || m === null) return null;
  const r = m as { method?: unknown; id?: unknown };
  if (typeof r.method !== "string") return null;
  return typeof r.id === "string" || typeof r.id === "number" ? r.id : null;
}

/** The id an answer (a result or an error) is for, else null. */
function answerId(m: unknown): Id | null {
  if (typeof m !== "object" || m === null) return null;
  const r = m as { method?: unknown; id?: unknown; result?: unknown; error?: unknown };
  if (r.method !== undefined || (r.result === undefined && r.error === undefined)) return null;
  return typeof r.id === "string" || typeof r.id === "number" ? r.id : null;
}

/** The request a client's notifications/cancelled names, else null. */
function cancelledId(m: unknown): Id | null {
  const r = m as { method?: unknown; params?: { requestId?: unknown } } | null;
  if (r?.method !== "notifications/cancelled") return null;
  const id = r.params?.requestId;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/** The error a request gets whose id is in flight. */
export function duplicateIdError(id: Id): JSONRPCMessage {
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: -32600,
      message: `Invalid Request: a request with id ${
        JSON.stringify(id)
      } is already in flight on this connection; give each request an id of its own`,
    },
  };
}

/** The ids of one connection's requests that have no answer yet. */
export class InFlightIds {
  private readonly ids = new Set<string>();

  /** Whether a request with `id` runs now. */
  has(id: Id): boolean {
    return this.ids.has(keyOf(id));
  }

  /** Notes what the client sends: a request's id is taken, a cancellation frees its id. */
  received(m: unknown): void {
    const id = requestId(m);
    if (id !== null) this.ids.add(keyOf(id));
    const cancelled = cancelledId(m);
    if (cancelled !== null) this.ids.delete(keyOf(cancelled));
  }

  /** Notes what the server sends: an answer frees its request's id. */
  sent(m: unknown): void {
    const id = answerId(m);
    if (id !== null) this.ids.delete(keyOf(id));
  }
}

/**
 * `inner` with at most one request per id in flight: a request whose id is in flight is
 * answered with duplicateIdError() and not passed on.
 */
export function uniqueRequestIds(inner: Transport): Transport {
  const ids = new InFlightIds();
  const outer: Transport = {
    start: () => inner.start(),
    send: (m, o) => {
      ids.sent(m);
      return inner.send(m, o);
    },
    close: () => inner.close(),
  };
  inner.onclose = () => outer.onclose?.();
  inner.onerror = (e) => outer.onerror?.(e);
  inner.onmessage = (msg, extra) => {
    const id = requestId(msg);
    if (id !== null && ids.has(id)) {
      inner.send(duplicateIdError(id)).catch((e) => outer.onerror?.(e));
      return;
    }
    ids.received(msg);
    outer.onmessage?.(msg, extra);
  };
  return outer;
}
