import assert from "node:assert/strict";
import { dirBlobStore } from "../../../../adapters/store/kv/blob_store.ts";
import { memoryBlobStore } from "../../../../adapters/store/memory/blob_store.ts";
import { blobId, getJson, putJson } from "../../../../core/ports/blob_store.ts";

Deno.test("blobId() is the SHA-256 of the UTF-8 bytes", () => {
  assert.equal(blobId("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert.equal(blobId(new TextEncoder().encode("abc")), blobId("abc"));
});

for (
  const [kind, make] of [
    ["dirBlobStore()", async () => dirBlobStore(await Deno.makeTempDir())],
    ["memoryBlobStore()", () => Promise.resolve(memoryBlobStore())],
  ] as const
) {
  Deno.test(`${kind} stores content once under its hash and gives it back`, async () => {
    const blobs = await make();
    const id = await blobs.put("evidence ✓");
    assert.equal(id, blobId("evidence ✓"));
    assert.equal(await blobs.put("evidence ✓"), id);
    assert.equal(new TextDecoder().decode((await blobs.get(id))!), "evidence ✓");
    assert.equal(await blobs.has(id), true);
    assert.equal(await blobs.get("0".repeat(64)), null);
    assert.equal(await blobs.has("../../etc/passwd"), false);
    const jsonId = await putJson(blobs, { a: [1, 2] });
    assert.deepEqual(await getJson(blobs, jsonId), { a: [1, 2] });
  });
}

Deno.test("dirBlobStore() writes <prefix>/<id> and leaves no temporary file", async () => {
  const dir = await Deno.makeTempDir();
  const id = await dirBlobStore(dir).put("x");
  const names: string[] = [];
  for await (const e of Deno.readDir(`${dir}/${id.slice(0, 2)}`)) names.push(e.name);
  assert.deepEqual(names, [id]);
  await Deno.remove(dir, { recursive: true });
});
