/**
 * POSIX paths (dvergr's sandbox and stores assume a POSIX system), as node:path's posix
 * functions do them, for the modules every command loads: the first import of any node:
 * module boots Deno's Node compatibility layer (node:path alone ~8 ms, with node:crypto
 * ~25 ms of each start on the development machine), which `dvergr check` and `--help` need
 * for nothing else.
 */

/** The separator of path segments. */
export const sep = "/";

export function isAbsolute(path: string): boolean {
  return path.startsWith("/");
}

/** `path` with "." and ".." segments and repeated slashes resolved ("." when empty). */
export function normalize(path: string): string {
  if (path === "") return ".";
  const absolute = isAbsolute(path);
  const trailing = path.endsWith("/");
  const out: string[] = [];
  for (const seg of path.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
    } else out.push(seg);
  }
  const body = out.join("/");
  if (absolute) return `/${body}${trailing && body !== "" ? "/" : ""}`;
  if (body === "") return trailing ? "./" : ".";
  return trailing ? `${body}/` : body;
}

/** The segments joined with "/" and normalized ("." for none). */
export function join(...parts: string[]): string {
  const nonEmpty = parts.filter((p) => p !== "");
  return nonEmpty.length === 0 ? "." : normalize(nonEmpty.join("/"));
}

/**
 * The absolute path the segments name, read right to left up to the first absolute one,
 * from `cwd` when none is (node:path's resolve with the working directory given: this layer
 * does not reach the process; adapters/files/resolve.ts gives it); no trailing slash.
 */
export function resolveFrom(cwd: string, ...parts: string[]): string {
  let path = "";
  for (let i = parts.length - 1; i >= 0 && !isAbsolute(path); i--) {
    if (parts[i] !== "") path = path === "" ? parts[i] : `${parts[i]}/${path}`;
  }
  if (!isAbsolute(path)) path = path === "" ? cwd : `${cwd}/${path}`;
  const n = normalize(path);
  return n.length > 1 && n.endsWith("/") ? n.slice(0, -1) : n;
}

/** The last segment, trailing slashes aside ("" for "/" and ""). */
export function basename(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}

/** All but the last segment ("." when there is none, "/" for the root), as node:path gives it. */
export function dirname(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  if (trimmed === "") return path === "" ? "." : "/";
  const i = trimmed.lastIndexOf("/");
  if (i === -1) return ".";
  if (i === 0) return "/";
  // Only the slash before the last segment goes: "a//b" → "a/", "//b" → "//".
  return i === 1 && trimmed[0] === "/" ? "//" : trimmed.slice(0, i);
}

/** The path from `from` to `to`, both resolved from `cwd` first ("" when they are the same). */
export function relativeFrom(cwd: string, from: string, to: string): string {
  const a = resolveFrom(cwd, from).split("/").filter((s) => s !== "");
  const b = resolveFrom(cwd, to).split("/").filter((s) => s !== "");
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  return [...Array(a.length - common).fill(".."), ...b.slice(common)].join("/");
}
