/**
 * One stream of messages (stdio) carrying both eras of MCP: requests of the stateless era
 * (isStatelessRequest) go to the stateless layer and their answers and notifications back
 * to the stream; everything else goes to the SDK's server as before. A stateless request
 * is cancelled with notifications/cancelled naming its id.
 */
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import {
  isStatelessRequest,
  type JsonRpcId,
  type JsonRpcNotification,
  type StatelessHandler,
} from "./stateless.ts";

/** `inner` as the SDK's server sees it, with the stateless requests taken out. */
export function splitEras(inner: Transport, stateless: StatelessHandler): Transport {
  const running = new Map<JsonRpcId, AbortController>();
  const send = (m: unknown) => inner.send(m as JSONRPCMessage).catch(() => {});
  const outer: Transport = {
    start: () => inner.start(),
    send: (m, o) => inner.send(m, o),
    close: async () => {
      stateless.close();
      await inner.close();
    },
  };
  inner.onclose = () => {
    for (const c of running.values()) c.abort();
    outer.onclose?.();
  };
  inner.onerror = (e) => outer.onerror?.(e);
  inner.onmessage = (msg, extra) => {
    if (isStatelessRequest(msg)) {
      const cancel = new AbortController();
      running.set(msg.id, cancel);
      stateless.handle(msg, {
        notify: (n: JsonRpcNotification) => void send(n),
        signal: cancel.signal,
      }).then((answer) => {
        if (answer !== null) return send(answer);
      }).finally(() => running.delete(msg.id));
      return;
    }
    const m = msg as { method?: string; params?: { requestId?: JsonRpcId } };
    if (m.method === "notifications/cancelled" && m.params?.requestId !== undefined) {
      const c = running.get(m.params.requestId);
      if (c) {
        c.abort();
        return;
      }
    }
    outer.onmessage?.(msg, extra);
  };
  return outer;
}
