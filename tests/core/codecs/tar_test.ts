import assert from "node:assert/strict";
import { paxRecords, TAR_BLOCK, tarMember, tarOctal } from "../../../core/codecs/tar.ts";

/** A ustar header block with the given fields (octal numbers as tar writes them). */
function header(
  f: { name?: string; prefix?: string; type?: string; size?: string; link?: string },
) {
  const h = new Uint8Array(TAR_BLOCK);
  const put = (offset: number, text: string) => h.set(new TextEncoder().encode(text), offset);
  put(0, f.name ?? "");
  put(124, f.size ?? "00000000012\0");
  if (f.type !== undefined) put(156, f.type);
  put(157, f.link ?? "");
  put(257, "ustar\0");
  put(345, f.prefix ?? "");
  return h;
}

Deno.test("tarMember() reads a ustar header: name after its prefix, size, type, link", () => {
  assert.deepEqual(
    tarMember(header({ name: "b.txt", prefix: "out/sub", type: "0" }), new Map(), null),
    {
      type: "0",
      size: 10,
      name: "out/sub/b.txt",
      linkTarget: "",
    },
  );
  const dir = tarMember(header({ name: "out/dir/", type: "5", size: "0" }), new Map(), null);
  assert.equal(dir.name, "out/dir");
  // A NUL type flag is an old-style regular file.
  assert.equal(tarMember(header({ name: "x" }), new Map(), null).type, "0");
  const link = tarMember(header({ name: "out/l", type: "1", link: "out/b.txt" }), new Map(), null);
  assert.equal(link.linkTarget, "out/b.txt");
});

Deno.test("tarMember() takes pax records and a GNU long name over the header's fields", () => {
  const pax = new Map([["path", "out/€😀.txt"], ["size", "3"], ["linkpath", "out/t"]]);
  assert.deepEqual(tarMember(header({ name: "short", type: "0" }), pax, "ignored"), {
    type: "0",
    size: 3,
    name: "out/€😀.txt",
    linkTarget: "out/t",
  });
  assert.equal(
    tarMember(header({ name: "short", type: "0" }), new Map(), "out/long/name").name,
    "out/long/name",
  );
});

Deno.test("tarOctal() reads an octal field, and null for anything else", () => {
  assert.equal(tarOctal(header({ size: "00000000777\0" }), 124, 12), 511);
  assert.equal(tarOctal(header({ size: "12x\0" }), 124, 12), null);
  assert.equal(tarOctal(header({ size: "\0" }), 124, 12), null);
  assert.equal(tarMember(header({ size: "junk" }), new Map(), null).size, null);
});

Deno.test("paxRecords() counts record lengths in bytes, so UTF-8 names survive", () => {
  const rec = (k: string, v: string) => {
    const body = ` ${k}=${v}\n`;
    const bytes = new TextEncoder().encode(body).length;
    let len = bytes + String(bytes).length;
    if (String(len).length !== String(bytes).length) len++;
    return `${len}${body}`;
  };
  const data = new TextEncoder().encode(
    rec("path", "out/Müller.txt") + rec("mtime", "1.5") + rec("path", "out/€😀.txt"),
  );
  const got = paxRecords(data);
  assert.equal(got.get("path"), "out/€😀.txt");
  assert.equal(got.get("mtime"), "1.5");
  // Garbage ends the records without throwing.
  assert.deepEqual([...paxRecords(new TextEncoder().encode("99999 path=x\n"))], []);
  assert.deepEqual([...paxRecords(new TextEncoder().encode("x"))], []);
});
