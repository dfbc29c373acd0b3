/**
 * Our SigV4 signer against AWS's own published examples (the S3 API reference, "Signature
 * Calculations for the Authorization Header: Transferring Payload in a Single Chunk"):
 * the example credentials AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY,
 * us-east-1, 20130524T000000Z, and the signatures AWS documents for them. These pin the
 * signer to AWS's algorithm, not only to the fake server that uses the same code.
 */
import assert from "node:assert/strict";
import {
  authorization,
  canonicalRequest,
  EMPTY_SHA256,
  encodePath,
  parseAuthorization,
  payloadHash,
  signature,
} from "../../../../adapters/store/s3/sigv4.ts";

const creds = {
  accessKeyId: "AKIAIOSFODNN7EXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
};
const HOST = "examplebucket.s3.amazonaws.com";
const DATE = "20130524T000000Z";

Deno.test("SigV4: AWS's GET Object example (a Range header, empty payload) signs as documented", () => {
  const input = {
    method: "GET",
    path: encodePath("/test.txt"),
    headers: {
      Host: HOST,
      Range: "bytes=0-9",
      "x-amz-content-sha256": EMPTY_SHA256,
      "x-amz-date": DATE,
    },
    payloadHash: EMPTY_SHA256,
    region: "us-east-1",
  };
  const s = signature(input, creds.secretAccessKey);
  assert.equal(
    s.stringToSign.split("\n")[3],
    "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972",
  );
  assert.equal(
    authorization(input, creds),
    "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request," +
      "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date," +
      "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
  );
});

Deno.test("SigV4: AWS's PUT Object example (x-amz-content-sha256 of the body, a $ in the key) signs as documented", () => {
  const body = new TextEncoder().encode("Welcome to Amazon S3.");
  const hash = payloadHash(body);
  assert.equal(hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  const input = {
    method: "PUT",
    path: encodePath("/test$file.text"),
    headers: {
      Host: HOST,
      Date: "Fri, 24 May 2013 00:00:00 GMT",
      "x-amz-date": DATE,
      "x-amz-storage-class": "REDUCED_REDUNDANCY",
      "x-amz-content-sha256": hash,
    },
    payloadHash: hash,
    region: "us-east-1",
  };
  assert.equal(input.path, "/test%24file.text");
  assert.equal(
    canonicalRequest(input).text,
    [
      "PUT",
      "/test%24file.text",
      "",
      "date:Fri, 24 May 2013 00:00:00 GMT",
      `host:${HOST}`,
      `x-amz-content-sha256:${hash}`,
      `x-amz-date:${DATE}`,
      "x-amz-storage-class:REDUCED_REDUNDANCY",
      "",
      "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
      hash,
    ].join("\n"),
  );
  const auth = parseAuthorization(authorization(input, creds));
  assert.equal(
    auth?.signature,
    "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
  );
  assert.deepEqual(auth?.signedHeaders, [
    "date",
    "host",
    "x-amz-content-sha256",
    "x-amz-date",
    "x-amz-storage-class",
  ]);
});

Deno.test("SigV4: AWS's bucket examples with a query (?lifecycle, ?max-keys=2&prefix=J) sign as documented", () => {
  const base = {
    method: "GET",
    path: "/",
    headers: { host: HOST, "x-amz-content-sha256": EMPTY_SHA256, "x-amz-date": DATE },
    payloadHash: EMPTY_SHA256,
    region: "us-east-1",
  };
  const lifecycle = signature({ ...base, query: [["lifecycle", ""]] }, creds.secretAccessKey);
  assert.equal(
    lifecycle.signature,
    "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543",
  );
  // Given out of order: the canonical query sorts them.
  const list = signature(
    { ...base, query: [["prefix", "J"], ["max-keys", "2"]] },
    creds.secretAccessKey,
  );
  assert.equal(list.signature, "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
});

Deno.test("SigV4: a changed byte anywhere that is signed changes the signature", () => {
  const input = {
    method: "PUT",
    path: "/bucket/ab/abc",
    headers: { host: "127.0.0.1:9000", "x-amz-content-sha256": EMPTY_SHA256, "x-amz-date": DATE },
    payloadHash: EMPTY_SHA256,
    region: "us-east-1",
  };
  const sig = signature(input, creds.secretAccessKey).signature;
  const variants = [
    { ...input, method: "GET" },
    { ...input, path: "/bucket/ab/abd" },
    { ...input, region: "eu-west-1" },
    { ...input, payloadHash: payloadHash(new Uint8Array([1])) },
    { ...input, headers: { ...input.headers, host: "127.0.0.1:9001" } },
    { ...input, headers: { ...input.headers, "x-amz-date": "20130524T000001Z" } },
  ];
  for (const v of variants) assert.notEqual(signature(v, creds.secretAccessKey).signature, sig);
  assert.notEqual(signature(input, creds.secretAccessKey + "x").signature, sig);
});
