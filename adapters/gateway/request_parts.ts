/**
 * The content parts of a model request (its messages' blocks, tool results' blocks,
 * Responses input items and their content), as the gateway weighs and screens them:
 * images cost tokens by their pixels (request_limits.ts counts them); a part the provider
 * would fetch from a URL reaches the network; a part naming a file stored at the provider
 * reaches the key holder's account; documents, files and audio are not what a world holds.
 *
 * Permissions: none.
 */
import type { ProviderApi } from "./usage_meter.ts";

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj | null {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Obj : null;
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** Every content part of a request (bounded by its body: each is visited once). */
export function contentParts(api: ProviderApi, body: Obj): Obj[] {
  const out: Obj[] = [];
  const add = (v: unknown) => {
    const o = obj(v);
    if (o) out.push(o);
  };
  const blocks = (content: unknown) => {
    for (const b of arr(content)) {
      add(b);
      // Anthropic tool results hold blocks of their own; Responses tool outputs may too.
      const o = obj(b);
      if (o) { for (const inner of [...arr(o.content), ...arr(o.output)]) add(inner); }
    }
  };
  if (api === "openai-responses") {
    for (const item of arr(body.input)) {
      add(item);
      const o = obj(item);
      if (o) blocks([...arr(o.content), ...arr(o.output)]);
    }
  } else {
    for (const m of arr(body.messages)) blocks(obj(m)?.content);
    blocks(body.system);
  }
  return out;
}

const IMAGE_TYPES = new Set(["image", "image_url", "input_image"]);
const NOT_A_WORLD = new Set(["document", "file", "input_file", "input_audio", "container_upload"]);

/** What the parts of a request amount to. */
export interface PartsReading {
  images: number;
  /** Parts the provider would fetch over the network (a URL source). */
  fetched: number;
  /** Why a part cannot be forwarded at all, or null. */
  refused: string | null;
}

function urlOf(part: Obj): string | null {
  const src = obj(part.source);
  if (src?.type === "url" && typeof src.url === "string") return src.url;
  const iu = part.image_url;
  const u = typeof iu === "string" ? iu : obj(iu)?.url;
  return typeof u === "string" && !u.startsWith("data:") ? u : null;
}

/** Reads the parts of a request: images, URL sources, refused kinds. */
export function readParts(api: ProviderApi, body: Obj): PartsReading {
  const r: PartsReading = { images: 0, fetched: 0, refused: null };
  for (const part of contentParts(api, body)) {
    const type = typeof part.type === "string" ? part.type : "";
    if (NOT_A_WORLD.has(type)) {
      r.refused ??= `a "${type}" part (the gateway forwards text and inline images)`;
      continue;
    }
    const src = obj(part.source);
    if (
      typeof part.file_id === "string" || src?.type === "file" || typeof src?.file_id === "string"
    ) {
      r.refused ??= `a part naming a file stored at the provider`;
      continue;
    }
    if (!IMAGE_TYPES.has(type)) continue;
    r.images++;
    if (urlOf(part) !== null) r.fetched++;
  }
  return r;
}
