// Shared by the example invoice agents: where the task says to read and write, and how
// to write the answer as EDN. The working directory is the world's root, with and
// without bubblewrap, so world paths are used without their leading slash.

/** The task text: DVERGR_TASK, else stdin. */
export async function readTask(): Promise<string> {
  const fromEnv = Deno.env.get("DVERGR_TASK");
  if (fromEnv) return fromEnv;
  return await new Response(Deno.stdin.readable).text();
}

/** The first world path under /docs/ the task names (input) and its .edn answer under /out/. */
export function taskPaths(task: string): { input: string; answer: string } {
  const input = task.match(/\/docs\/[\w./-]+\w/)?.[0] ?? "/docs/invoice.txt";
  const answer = task.match(/\/out\/[\w./-]+\.edn/)?.[0] ?? "/out/answer.edn";
  return { input: input.slice(1), answer: answer.slice(1) };
}

function ednString(s: string): string {
  return '"' + s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n") + '"';
}

/** An EDN map with string keys: {"vendor" "…" "total" 272.27}. */
export function ednMap(fields: Record<string, string | number | null>): string {
  const items = Object.entries(fields)
    .filter(([, v]) => v !== null)
    .map(([k, v]) =>
      `${ednString(k)} ${typeof v === "number" ? String(v) : ednString(v as string)}`
    );
  return `{${items.join(" ")}}\n`;
}

/** Every amount written with two decimals: 1.234,56 · 1,234.56 · 1'234.56 · 99,00. */
export const AMOUNT = /\d{1,3}(?:[.,' ]\d{3})+[.,]\d{2}\b|\d+[.,]\d{2}\b/g;

/** An amount as a number, whichever way its separators are written. */
export function amountValue(text: string): number {
  // The last separator (two digits before the end) is the decimal one; the rest group.
  const whole = text.slice(0, -3).replace(/[.,' ]/g, "");
  return Number(`${whole}.${text.slice(-2)}`);
}

export async function writeAnswer(path: string, text: string): Promise<void> {
  const dir = path.split("/").slice(0, -1).join("/");
  if (dir) await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(path, text);
}

/**
 * A minimal MCP client over Streamable HTTP for the world's tools at DVERGR_MCP_URL (every
 * command candidate gets one): initialize once, then tools/call. Answers may come as JSON
 * or as a server-sent event stream.
 */
export class WorldMcp {
  private session: string | null = null;
  private nextId = 1;
  constructor(private readonly url: string) {}

  private async post(message: Record<string, unknown>): Promise<Record<string, unknown> | null> {
    const res = await fetch(this.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(this.session ? { "mcp-session-id": this.session } : {}),
      },
      body: JSON.stringify({ jsonrpc: "2.0", ...message }),
    });
    this.session = res.headers.get("mcp-session-id") ?? this.session;
    const text = await res.text();
    if (!("id" in message)) return null;
    if (!res.ok) throw new Error(`MCP ${message.method}: HTTP ${res.status}: ${text}`);
    const json = (res.headers.get("content-type") ?? "").includes("text/event-stream")
      ? text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5)).pop() ?? ""
      : text;
    const reply = JSON.parse(json);
    if (reply.error) throw new Error(`MCP ${message.method}: ${reply.error.message}`);
    return reply.result;
  }

  async connect(): Promise<void> {
    await this.post({
      id: this.nextId++,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "dvergr-example-agent", version: "1" },
      },
    });
    await this.post({ method: "notifications/initialized" });
  }

  /** The text of a tool's result; a result flagged as an error throws. */
  async call(name: string, args: Record<string, unknown>): Promise<string> {
    const result = await this.post({
      id: this.nextId++,
      method: "tools/call",
      params: { name, arguments: args },
    }) as { content: { type: string; text: string }[]; isError?: boolean };
    const text = result.content.map((c) => c.text ?? "").join("");
    if (result.isError) throw new Error(`${name}: ${text}`);
    return text;
  }
}
