/**
 * Reading tar (POSIX ustar with pax extended headers, GNU long names) as the capture pack of
 * a sandboxed attempt holds it: header fields, pax records, and the member a header
 * describes. Pure; the pack is untrusted, so nothing here throws for what it holds (a bad
 * field reads as null or empty). The read-back that writes members into a world is
 * adapters/candidates/command/limits.ts.
 */

/** Tar's block: headers are one, member data is padded to whole ones. */
export const TAR_BLOCK = 512;

/** A NUL-terminated text field of a header. */
export function tarField(header: Uint8Array, offset: number, length: number): string {
  let end = offset;
  while (end < offset + length && header[end] !== 0) end++;
  return new TextDecoder().decode(header.subarray(offset, end));
}

/** An octal number field of a header, or null when it is not one. */
export function tarOctal(header: Uint8Array, offset: number, length: number): number | null {
  const text = tarField(header, offset, length).trim();
  return /^[0-7]+$/.test(text) ? parseInt(text, 8) : null;
}

/**
 * Records of a pax extended header: `len key=value\n`…, where `len` counts the record's
 * BYTES (a UTF-8 name is longer in bytes than in UTF-16 units): split on bytes, then decode.
 */
export function paxRecords(data: Uint8Array): Map<string, string> {
  const out = new Map<string, string>();
  const text = new TextDecoder();
  let i = 0;
  while (i < data.length) {
    const space = data.indexOf(0x20, i);
    if (space < 0 || space - i > 20) break;
    const len = Number(text.decode(data.subarray(i, space)));
    if (!Number.isSafeInteger(len) || len <= space - i + 1 || i + len > data.length) break;
    const record = data.subarray(space + 1, i + len - 1);
    const eq = record.indexOf(0x3d);
    if (eq > 0) out.set(text.decode(record.subarray(0, eq)), text.decode(record.subarray(eq + 1)));
    i += len;
  }
  return out;
}

/** The member a header describes, with the pax records and GNU long name read before it. */
export interface TarMember {
  /** The type flag: "0" file, "5" directory, "1" hard link, "2" symlink, "x"/"g" pax, "L" long name. */
  type: string;
  /** Bytes of data (pax `size` over the header's), or null when unreadable. */
  size: number | null;
  /** The member's path without trailing slashes (pax `path`, else the long name, else ustar). */
  name: string;
  /** A link's target (pax `linkpath` over the header's). */
  linkTarget: string;
}

/** Decodes one header block, `pax` and `longName` being what the previous members set. */
export function tarMember(
  header: Uint8Array,
  pax: ReadonlyMap<string, string>,
  longName: string | null,
): TarMember {
  const type = String.fromCharCode(header[156] || 48);
  const size = pax.has("size") ? Number(pax.get("size")) : tarOctal(header, 124, 12);
  const prefix = tarField(header, 345, 155);
  const rawName = pax.get("path") ?? longName ??
    (prefix ? `${prefix}/${tarField(header, 0, 100)}` : tarField(header, 0, 100));
  const linkTarget = pax.get("linkpath") ?? tarField(header, 157, 100);
  return { type, size, name: rawName.replace(/\/+$/, ""), linkTarget };
}
