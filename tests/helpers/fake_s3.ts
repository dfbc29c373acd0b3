/**
 * A fake S3 for tests, on 127.0.0.1 at a free port: path-style buckets (`/BUCKET/KEY`) held
 * in memory, PUT, GET and HEAD of objects and HEAD of a bucket, and every request's
 * AWS Signature V4 VERIFIED as S3 does (adapters/store/s3/sigv4.ts computes it, pinned to
 * AWS's published examples by tests/adapters/store/s3/sigv4_test.ts): an unknown access key,
 * a wrong signature (any signed header, the path, the method or the secret changed), a
 * request dated more than 15 minutes off, a wrong session token, or a body whose SHA-256 is
 * not its x-amz-content-sha256 is refused with S3's XML error (403 InvalidAccessKeyId,
 * SignatureDoesNotMatch, RequestTimeTooSkewed, InvalidToken; 400
 * XAmzContentSHA256Mismatch). `failNext(n, status, method)` makes the next n requests (of
 * that method, when given) fail (503
 * SlowDown, 500 InternalError) for retry tests; `requests` lists what came (method, path,
 * status), never a header.
 */
import { createHash } from "node:crypto";
import { parseAuthorization, signature } from "../../adapters/store/s3/sigv4.ts";

export interface FakeS3Options {
  buckets: string[];
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region?: string;
}

export interface FakeS3 {
  /** `http://127.0.0.1:PORT`, for AWS_ENDPOINT_URL_S3. */
  endpoint: string;
  /** Objects by bucket, then key. */
  objects: Map<string, Map<string, Uint8Array>>;
  requests: { method: string; path: string; status: number }[];
  /**
   * The next `n` requests (only those of `method`, when given) get `status` (503: SlowDown,
   * else InternalError) instead; Infinity until failNext(0).
   */
  failNext(n: number, status?: number, method?: string): void;
  /** The environment a client needs: endpoint, region and the credentials. */
  env(): Record<string, string>;
  stop(): Promise<void>;
}

const xml = (status: number, code: string, message: string, resource: string) =>
  new Response(
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message>` +
      `<Resource>${resource}</Resource><RequestId>fake</RequestId></Error>`,
    { status, headers: { "content-type": "application/xml" } },
  );

/** The SigV4 check of a request: null when it passes, else S3's refusal. */
function verify(
  req: Request,
  url: URL,
  body: Uint8Array,
  o: FakeS3Options,
  region: string,
): Response | null {
  const resource = url.pathname;
  const auth = parseAuthorization(req.headers.get("authorization") ?? "");
  if (auth === null) {
    return xml(403, "AccessDenied", "Missing or malformed Authorization header", resource);
  }
  if (auth.accessKeyId !== o.accessKeyId) {
    return xml(
      403,
      "InvalidAccessKeyId",
      "The AWS Access Key Id you provided does not exist in our records.",
      resource,
    );
  }
  const date = req.headers.get("x-amz-date") ?? "";
  const m = date.match(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/);
  const at = m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : NaN;
  if (!(Math.abs(Date.now() - at) <= 15 * 60_000)) {
    return xml(
      403,
      "RequestTimeTooSkewed",
      "The difference between the request time and the current time is too large.",
      resource,
    );
  }
  const needed = ["host", "x-amz-content-sha256", "x-amz-date"];
  if (o.sessionToken !== undefined) needed.push("x-amz-security-token");
  if (needed.some((h) => !auth.signedHeaders.includes(h))) {
    return xml(403, "AccessDenied", `SignedHeaders must include ${needed.join(";")}`, resource);
  }
  if (o.sessionToken !== undefined && req.headers.get("x-amz-security-token") !== o.sessionToken) {
    return xml(
      403,
      "InvalidToken",
      "The provided token is malformed or otherwise invalid.",
      resource,
    );
  }
  const claimed = req.headers.get("x-amz-content-sha256") ?? "";
  const actual = createHash("sha256").update(body).digest("hex");
  if (claimed !== "UNSIGNED-PAYLOAD" && claimed !== actual) {
    return xml(
      400,
      "XAmzContentSHA256Mismatch",
      "The provided 'x-amz-content-sha256' header does not match what was computed.",
      resource,
    );
  }
  const headers: Record<string, string> = {};
  for (const h of auth.signedHeaders) headers[h] = req.headers.get(h) ?? "";
  const query = [...url.searchParams.entries()];
  const expected = signature(
    { method: req.method, path: url.pathname, query, headers, payloadHash: claimed, region },
    o.secretAccessKey,
  );
  if (auth.scope !== expected.scope || auth.signature !== expected.signature) {
    return xml(
      403,
      "SignatureDoesNotMatch",
      "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
      resource,
    );
  }
  return null;
}

/** Starts a fake S3 holding the (empty) `buckets`. */
export function startFakeS3(o: FakeS3Options): FakeS3 {
  const region = o.region ?? "us-east-1";
  const objects = new Map(o.buckets.map((b) => [b, new Map<string, Uint8Array>()]));
  const requests: FakeS3["requests"] = [];
  let failing: { n: number; status: number; method?: string } = { n: 0, status: 503 };

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const body = new Uint8Array(await req.arrayBuffer());
    if (failing.n > 0 && (failing.method === undefined || failing.method === req.method)) {
      failing.n--;
      return failing.status === 503
        ? xml(503, "SlowDown", "Please reduce your request rate.", url.pathname)
        : xml(
          failing.status,
          "InternalError",
          "We encountered an internal error. Please try again.",
          url.pathname,
        );
    }
    const refused = verify(req, url, body, o, region);
    if (refused) return refused;
    const [, bucketName, ...rest] = url.pathname.split("/");
    const bucket = objects.get(decodeURIComponent(bucketName ?? ""));
    if (bucket === undefined) {
      return xml(404, "NoSuchBucket", "The specified bucket does not exist", url.pathname);
    }
    const key = rest.map(decodeURIComponent).join("/");
    if (key === "") {
      return req.method === "HEAD"
        ? new Response(null, { status: 200 })
        : xml(405, "MethodNotAllowed", "Only HEAD of a bucket here", url.pathname);
    }
    if (req.method === "PUT") {
      bucket.set(key, body);
      return new Response(null, { status: 200, headers: { etag: '"fake"' } });
    }
    const object = bucket.get(key);
    if (req.method !== "GET" && req.method !== "HEAD") {
      return xml(405, "MethodNotAllowed", "The specified method is not allowed", url.pathname);
    }
    if (object === undefined) {
      return req.method === "HEAD"
        ? new Response(null, { status: 404 })
        : xml(404, "NoSuchKey", "The specified key does not exist.", url.pathname);
    }
    const headers = { "content-length": String(object.length) };
    return new Response(req.method === "HEAD" ? null : object.slice(), { status: 200, headers });
  }

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const response = await handle(req);
    requests.push({ method: req.method, path: new URL(req.url).pathname, status: response.status });
    return response;
  });
  const endpoint = `http://127.0.0.1:${server.addr.port}`;
  return {
    endpoint,
    objects,
    requests,
    failNext(n, status = 503, method) {
      failing = { n, status, method };
    },
    env() {
      return {
        AWS_ENDPOINT_URL_S3: endpoint,
        AWS_REGION: region,
        AWS_ACCESS_KEY_ID: o.accessKeyId,
        AWS_SECRET_ACCESS_KEY: o.secretAccessKey,
        ...(o.sessionToken ? { AWS_SESSION_TOKEN: o.sessionToken } : {}),
      };
    },
    stop: () => server.shutdown(),
  };
}
