/**
 * The S3 blob store against a fake S3 on 127.0.0.1 that verifies every request's SigV4
 * signature (tests/helpers/fake_s3.ts): our requests are accepted, tampered ones refused
 * with S3's XML errors; where objects go; HEAD-first for large blobs only; retries of
 * passing failures and a clear error for lasting ones, wrong credentials and a missing
 * bucket, never holding the secret; and the URL and environment rules of --blobs.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { objectStoreUnavailable, s3BlobStore } from "../../../../adapters/store/s3/blob_store.ts";
import {
  blobsTarget,
  blobsUrl,
  objectUrl,
  s3Target,
} from "../../../../adapters/store/s3/target.ts";
import { amzDate, authorization, payloadHash } from "../../../../adapters/store/s3/sigv4.ts";
import { startFakeS3 } from "../../../helpers/fake_s3.ts";
import { DvergrError } from "../../../../core/errors.ts";
import { isStorageError } from "../../../../core/storage_error.ts";

const SECRET = "s3cr3t/K7MDENG+bPxRfiCYzzzzEXAMPLE";
const KEYS = { accessKeyId: "AKIDTEST", secretAccessKey: SECRET };
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const fast = { tries: 3, backoffMs: 1 };

async function withS3(
  f: (s3: ReturnType<typeof startFakeS3>, env: (k: string) => string | undefined) => Promise<void>,
  opts: { sessionToken?: string } = {},
) {
  const s3 = startFakeS3({ buckets: ["blobs"], ...KEYS, ...opts });
  try {
    await f(s3, (k) => s3.env()[k]);
  } finally {
    await s3.stop();
  }
}

/** A request signed as the store signs one, with `tamper` applied after signing. */
async function signedRequest(
  endpoint: string,
  path: string,
  body: Uint8Array,
  tamper: (r: { url: string; headers: Record<string, string>; body: Uint8Array }) => void,
): Promise<{ status: number; text: string }> {
  const url = new URL(endpoint + path);
  const hash = payloadHash(body);
  const headers: Record<string, string> = {
    host: url.host,
    "x-amz-content-sha256": hash,
    "x-amz-date": amzDate(Date.now()),
  };
  headers.authorization = authorization(
    { method: "PUT", path: url.pathname, headers, payloadHash: hash, region: "us-east-1" },
    KEYS,
  );
  delete headers.host;
  const r = { url: url.toString(), headers, body };
  tamper(r);
  const response = await fetch(r.url, {
    method: "PUT",
    headers: r.headers,
    body: r.body as BodyInit,
  });
  return { status: response.status, text: await response.text() };
}

Deno.test("S3 blobs: a verifying server accepts our signed requests and refuses tampered ones", async () => {
  await withS3(async (s3) => {
    const body = new TextEncoder().encode("evidence");
    const path = `/blobs/x/${sha(body)}`;
    assert.equal((await signedRequest(s3.endpoint, path, body, () => {})).status, 200);
    const tampered: [
      string,
      (r: { url: string; headers: Record<string, string>; body: Uint8Array }) => void,
      number,
      string,
    ][] = [
      [
        "another body",
        (r) => (r.body = new TextEncoder().encode("evidencE")),
        400,
        "XAmzContentSHA256Mismatch",
      ],
      ["another key", (r) => (r.url = r.url.replace("/x/", "/y/")), 403, "SignatureDoesNotMatch"],
      [
        "another date",
        (r) => (r.headers["x-amz-date"] = amzDate(Date.now() - 1000)),
        403,
        "SignatureDoesNotMatch",
      ],
      [
        "a body hash changed with the body",
        (r) => {
          r.body = new TextEncoder().encode("forged");
          r.headers["x-amz-content-sha256"] = payloadHash(r.body);
        },
        403,
        "SignatureDoesNotMatch",
      ],
      [
        "another signature",
        (
          r,
        ) => (r.headers.authorization = r.headers.authorization.replace(
          /.$/,
          (c) => c === "0" ? "1" : "0",
        )),
        403,
        "SignatureDoesNotMatch",
      ],
      [
        "another access key",
        (r) => (r.headers.authorization = r.headers.authorization.replace("AKIDTEST", "AKIDOTHER")),
        403,
        "InvalidAccessKeyId",
      ],
      ["no signature", (r) => delete r.headers.authorization, 403, "AccessDenied"],
      [
        "an old date",
        (r) => (r.headers["x-amz-date"] = "20130524T000000Z"),
        403,
        "RequestTimeTooSkewed",
      ],
    ];
    for (const [what, tamper, status, code] of tampered) {
      const r = await signedRequest(s3.endpoint, path, body, tamper);
      assert.equal(r.status, status, what);
      assert.match(r.text, new RegExp(`<Error><Code>${code}</Code>`), what);
    }
    // Only the untampered request wrote: the forged body is nowhere.
    assert.deepEqual([...s3.objects.get("blobs")!.keys()], [`x/${sha(body)}`]);
  });
});

Deno.test("S3 blobs: objects at PREFIX/ID[0:2]/ID, small ones PUT at once, large ones HEAD first", async () => {
  await withS3(async (s3, env) => {
    const blobs = s3BlobStore(s3Target("s3://blobs/fleet/one/", env));
    const small = new TextEncoder().encode("small");
    const id = await blobs.put(small);
    assert.deepEqual([...s3.objects.get("blobs")!.keys()], [`fleet/one/${id.slice(0, 2)}/${id}`]);
    assert.deepEqual(s3.requests.map((r) => `${r.method} ${r.status}`), ["PUT 200"]);
    await blobs.put(small); // a PUT again: as cheap as a HEAD
    assert.equal(s3.requests.length, 2);

    s3.requests.length = 0;
    const large = new Uint8Array(200_000).map((_, i) => i % 251);
    const big = await blobs.put(large);
    assert.deepEqual(s3.requests.map((r) => `${r.method} ${r.status}`), ["HEAD 404", "PUT 200"]);
    assert.equal(await blobs.put(large), big);
    assert.deepEqual(s3.requests.slice(2).map((r) => `${r.method} ${r.status}`), ["HEAD 200"]);
    assert.equal((await blobs.get(big))?.length, large.length);
  });
});

Deno.test("S3 blobs: 503s and 500s are tried again; a lasting one is an IO error naming bucket and endpoint, not the secret", async () => {
  await withS3(async (s3, env) => {
    const blobs = s3BlobStore(s3Target("s3://blobs/p", env), { tries: 4, backoffMs: 1 });
    s3.failNext(3, 503);
    const id = await blobs.put("after three SlowDowns");
    assert.equal(new TextDecoder().decode((await blobs.get(id))!), "after three SlowDowns");
    s3.failNext(2, 500);
    assert.equal(await blobs.has(id), true);

    s3.failNext(4, 500);
    const e = await blobs.get(id).then(() => null, (e) => e);
    assert.ok(e instanceof DvergrError, String(e));
    assert.equal(e.code, "IO");
    assert.match(e.message, /s3:\/\/blobs\/p at http:\/\/127\.0\.0\.1:\d+/);
    assert.match(e.message, /InternalError/);
    assert.ok(!e.message.includes(SECRET) && !(e.hint ?? "").includes(SECRET));
    assert.equal(objectStoreUnavailable(e), true, "a lasting 5xx is waited for as a store outage");
    assert.equal(isStorageError(e), true, "it stops a run instead of faulting every cell");
  });
});

Deno.test("S3 blobs: wrong credentials, a missing bucket and an unreachable endpoint are clear errors at once", async () => {
  await withS3(async (s3, env) => {
    const wrongSecret = s3BlobStore(
      s3Target("s3://blobs", (k) => k === "AWS_SECRET_ACCESS_KEY" ? "not-the-secret" : env(k)),
      fast,
    );
    const bad = await wrongSecret.checkBucket().then(() => null, (e) => e);
    assert.ok(bad instanceof DvergrError);
    assert.match(bad.message, /Cannot use the bucket in s3:\/\/blobs at http:\/\/127\.0\.0\.1/);
    assert.match(bad.hint ?? "", /AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY/);
    assert.equal(objectStoreUnavailable(bad), false);
    assert.equal(isStorageError(bad), true);
    const wrongKey = s3BlobStore(
      s3Target("s3://blobs", (k) => k === "AWS_ACCESS_KEY_ID" ? "AKIDNOPE" : env(k)),
      fast,
    );
    const put = await wrongKey.put("x").then(() => null, (e) => e);
    assert.match(put.message, /InvalidAccessKeyId/);
    assert.ok(!put.message.includes(SECRET));
    // Refusals are not retried: one request each.
    assert.equal(s3.requests.filter((r) => r.status === 403).length, 2);

    const missing = s3BlobStore(s3Target("s3://no-such-bucket/p", env), fast);
    const gone = await missing.checkBucket().then(() => null, (e) => e);
    assert.match(gone.message, /s3:\/\/no-such-bucket\/p/);
    assert.match(gone.hint ?? "", /bucket's name/);
    const read = await missing.get("a".repeat(64)).then(() => null, (e) => e);
    assert.match(read?.message ?? "", /NoSuchBucket/, "a missing bucket is no missing blob");
  });
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (closed.addr as Deno.NetAddr).port;
  closed.close();
  const nowhere = s3BlobStore(
    s3Target(
      "s3://blobs",
      (k) =>
        ({
          ...KEYS,
          AWS_ACCESS_KEY_ID: "AKIDTEST",
          AWS_SECRET_ACCESS_KEY: SECRET,
          AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`,
        } as Record<string, string>)[k],
    ),
    fast,
  );
  const e = await nowhere.has("a".repeat(64)).then(() => null, (e) => e);
  assert.ok(e instanceof DvergrError);
  assert.match(e.message, new RegExp(`s3://blobs at http://127.0.0.1:${port}`));
  assert.equal(objectStoreUnavailable(e), true);
});

Deno.test("S3 blobs: temporary credentials sign their session token; without it the server refuses", async () => {
  await withS3(async (s3, env) => {
    const id = await s3BlobStore(s3Target("s3://blobs", env)).put("with a token");
    assert.equal(s3.objects.get("blobs")!.size, 1);
    const noToken = s3BlobStore(
      s3Target("s3://blobs", (k) => k === "AWS_SESSION_TOKEN" ? undefined : env(k)),
      fast,
    );
    const e = await noToken.get(id).then(() => null, (e) => e);
    assert.match(e?.message ?? "", /AccessDenied|InvalidToken/);
    assert.ok(!e.message.includes("token-FQoGZXIvYXdz"));
  }, { sessionToken: "token-FQoGZXIvYXdz" });
});

Deno.test("S3 blobs: an object whose bytes are not its id is an error, not evidence", async () => {
  await withS3(async (s3, env) => {
    const blobs = s3BlobStore(s3Target("s3://blobs", env));
    const id = await blobs.put("the real bytes");
    s3.objects.get("blobs")!.set(`${id.slice(0, 2)}/${id}`, new TextEncoder().encode("swapped"));
    await assert.rejects(blobs.get(id), /does not hold the bytes of its id/);
  });
});

Deno.test("--blobs / DVERGR_BLOBS: s3:// only, with a store, credentials from the AWS variables", () => {
  const env = (vars: Record<string, string>) => (k: string) => vars[k];
  const creds = { AWS_ACCESS_KEY_ID: "AKID", AWS_SECRET_ACCESS_KEY: SECRET };
  const store = "postgres://db/dvergr";
  assert.equal(blobsUrl(undefined, env({}), store), null);
  assert.equal(blobsUrl(undefined, env({ DVERGR_BLOBS: "s3://b-1/x" }), store), "s3://b-1/x");
  assert.equal(blobsUrl("s3://flag/y", env({ DVERGR_BLOBS: "s3://b-1/x" }), store), "s3://flag/y");
  assert.throws(() => blobsUrl("/tmp/blobs", env({}), store), /not an s3:\/\/ URL/);
  assert.throws(() => blobsUrl("s3://b-1", env({}), null), /without a PostgreSQL store/);
  assert.throws(() => s3Target("s3://B_ad/x", env(creds)), /not a bucket name/);
  assert.throws(() => s3Target("s3://bucket/../x", env(creds)), /\.\. segment/);
  const missing = (() => {
    try {
      blobsTarget("s3://bucket", env({ AWS_ACCESS_KEY_ID: "AKID" }), store);
    } catch (e) {
      return e as DvergrError;
    }
  })();
  assert.equal(missing?.code, "API_KEY_MISSING");
  assert.match(missing!.message, /AWS_SECRET_ACCESS_KEY is not set/);

  // AWS itself: virtual-hosted; a custom endpoint (and a dotted bucket): path-style.
  const aws = s3Target("s3://bucket/p/q/", env({ ...creds, AWS_DEFAULT_REGION: "eu-west-1" }));
  assert.equal(
    objectUrl(aws, "p/q/ab/abc").toString(),
    "https://bucket.s3.eu-west-1.amazonaws.com/p/q/ab/abc",
  );
  assert.equal(aws.prefix, "p/q");
  const dotted = s3Target("s3://my.bucket", env(creds));
  assert.equal(objectUrl(dotted, "k").toString(), "https://s3.us-east-1.amazonaws.com/my.bucket/k");
  const minio = s3Target(
    "s3://bucket",
    env({
      ...creds,
      AWS_ENDPOINT_URL: "http://minio:9000",
      AWS_ENDPOINT_URL_S3: "http://s3only:9000",
    }),
  );
  assert.equal(objectUrl(minio, null).toString(), "http://s3only:9000/bucket");
  assert.equal(objectUrl(s3Target("s3://bucket/a b", env(creds)), "a b/k").pathname, "/a%20b/k");
  assert.throws(
    () => s3Target("s3://bucket", env({ ...creds, AWS_ENDPOINT_URL: "http://user:pw@minio:9000" })),
    /without credentials/,
  );
});
