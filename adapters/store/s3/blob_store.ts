/**
 * Blobs in an S3-compatible object store (`--blobs s3://BUCKET/PREFIX` with a PostgreSQL
 * store): each blob is the object `PREFIX/ID[0:2]/ID`, put, read and looked for over S3's
 * REST API with requests signed by our SigV4 signer (sigv4.ts; no SDK).
 *
 * put() sends a blob up to 64 KiB with a PUT at once (a HEAD would cost as much as the
 * upload) and looks for a larger one with a HEAD first, so a bundle's files or a repeated
 * large capture is not uploaded again; either way the same id is the same bytes, so two
 * workers putting it at once write the same object. A PUT carries the body's SHA-256
 * (x-amz-content-sha256), which S3 checks, and put() returns only once S3 has answered 200:
 * the object is stored. get() checks the bytes against their id. A 5xx, a 429 or a network
 * error is tried again with backoff (6 tries, about 8 s); one that lasts, a refused
 * credential or a missing bucket is a DvergrError naming the bucket and endpoint — never a
 * credential (the secret is only an HMAC key here). Permissions: --allow-net to the endpoint.
 */
import { blobId, type BlobStore, bytesOf } from "../../../core/ports/blob_store.ts";
import { DvergrError } from "../../../core/errors.ts";
import { amzDate, authorization, EMPTY_SHA256, payloadHash } from "./sigv4.ts";
import { blobKey, describeTarget, objectUrl, type S3Target } from "./target.ts";

export interface S3BlobOptions {
  /** Tries of a request that fails for a passing reason (default 6). */
  tries?: number;
  /** The first wait between tries, doubled each time up to 4 s (default 250 ms). */
  backoffMs?: number;
  /** A request's time limit before it counts as failed (default 60 s + 1 s per MiB). */
  timeoutMs?: number;
  /** The clock the requests are dated by (tests give a skewed one). */
  now?: () => number;
}

export interface S3BlobStore extends BlobStore {
  /** Checks the bucket is there and the credentials may use it (a HEAD of the bucket). */
  checkBucket(): Promise<void>;
}

/**
 * The cause of a lasting failure of the object store. Its code is EIO, the storage's: the
 * engine stops a run on it (core/storage_error.ts) rather than fault every cell the same
 * way, keeping what was committed for the rerun. `passing` when it may pass by itself.
 */
class ObjectStoreFailure extends Error {
  readonly code = "EIO";
  constructor(message: string, readonly passing: boolean) {
    super(message);
  }
}

/**
 * Whether an error means the object store is out of reach for now (network errors, 5xx or
 * 429 that lasted through every try), also as the cause of another error.
 */
export function objectStoreUnavailable(e: unknown): boolean {
  for (let x: unknown = e, depth = 0; x && depth < 5; depth++) {
    if (x instanceof ObjectStoreFailure) return x.passing;
    x = (x as { cause?: unknown }).cause;
  }
  return false;
}

/** Blobs above this go HEAD-first (below it the upload costs what a HEAD does). */
const HEAD_FIRST_BYTES = 64 * 1024;
const ID = /^[0-9a-f]{64}$/;

type Method = "GET" | "HEAD" | "PUT";

/** S3's error code and message from an XML error body, when it has one. */
function s3Error(body: string): { code: string; message: string } | null {
  const code = body.match(/<Code>([^<]{1,200})<\/Code>/)?.[1];
  if (code === undefined) return null;
  return { code, message: body.match(/<Message>([^<]{0,500})<\/Message>/)?.[1] ?? "" };
}

const STATUS_TEXT: Record<number, string> = {
  301: "Moved Permanently",
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** Whether a failed response is worth another try. */
const passing = (status: number) => status >= 500 || status === 429 || status === 408;

/** What every request of one store shares. */
interface Client {
  target: S3Target;
  opts: S3BlobOptions;
  /** The bucket and endpoint, as errors name them. */
  where: string;
  /** Text as it may be shown: any credential in it (a server could echo one) masked. */
  clean(text: string): string;
}

interface Answer {
  status: number;
  bytes: Uint8Array;
  /** The bucket's region, when S3 says the request went to another. */
  region: string | null;
}

/** One signed request and its answer (a body read whole, none for HEAD). */
async function send(c: Client, method: Method, key: string | null, body?: Uint8Array) {
  const { target, opts } = c;
  const url = objectUrl(target, key);
  const hash = body ? payloadHash(body) : EMPTY_SHA256;
  const headers: Record<string, string> = {
    host: url.host,
    "x-amz-content-sha256": hash,
    "x-amz-date": amzDate((opts.now ?? Date.now)()),
  };
  if (target.credentials.sessionToken) {
    headers["x-amz-security-token"] = target.credentials.sessionToken;
  }
  headers.authorization = authorization(
    { method, path: url.pathname, headers, payloadHash: hash, region: target.region },
    target.credentials,
  );
  delete headers.host; // fetch sends it, from the URL
  const limit = opts.timeoutMs ?? 60_000 + Math.ceil((body?.length ?? 0) / 1048576) * 1000;
  const response = await fetch(url, {
    method,
    headers,
    body: body as BodyInit | undefined,
    redirect: "manual",
    signal: AbortSignal.timeout(limit),
  });
  const bytes = method === "HEAD"
    ? new Uint8Array(0)
    : new Uint8Array(await response.arrayBuffer());
  const region = response.headers.get("x-amz-bucket-region");
  return { status: response.status, bytes, region } satisfies Answer;
}

/** A lasting failure as the error to show: bucket and endpoint, S3's code, no secret. */
function failure(c: Client, what: string, r: Answer | null, error?: unknown): DvergrError {
  if (r === null) {
    const reason = error instanceof Error ? error.message : String(error);
    const message = c.clean(`Cannot ${what} in ${c.where}: ${reason}`);
    return new DvergrError("IO", message, {
      hint:
        "Check that the object store is running and AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) names it",
      cause: new ObjectStoreFailure(message, true),
    });
  }
  const err = s3Error(new TextDecoder().decode(r.bytes));
  // A HEAD's answer has no body: its status is all S3 says.
  const said = err
    ? `${err.code}${err.message ? ` (${err.message})` : ""}`
    : `HTTP ${r.status}${STATUS_TEXT[r.status] ? ` ${STATUS_TEXT[r.status]}` : ""}`;
  const hint = r.status === 403
    ? "Check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) and that they may read and write the bucket"
    : r.status === 404
    ? "Check the bucket's name in --blobs (or DVERGR_BLOBS) and that it exists at this endpoint"
    : r.status === 301 || r.region
    ? `The bucket is in another region${r.region ? ` (${r.region})` : ""}: set AWS_REGION to it`
    : "Check the object store's health; a rerun resumes where this one stopped";
  const message = c.clean(`Cannot ${what} in ${c.where}: ${said}`);
  const failed = new ObjectStoreFailure(message, passing(r.status));
  return new DvergrError("IO", message, { hint, cause: failed });
}

/**
 * The answer to a request, tried again while it fails for a passing reason; `ok` are the
 * statuses the caller handles (others are a failure).
 */
async function request(
  c: Client,
  what: string,
  req: { method: Method; key: string | null; ok: number[]; body?: Uint8Array },
): Promise<Answer> {
  const tries = c.opts.tries ?? 6;
  const backoff = c.opts.backoffMs ?? 250;
  for (let attempt = 1;; attempt++) {
    let r: Answer | null = null;
    let error: unknown = null;
    try {
      r = await send(c, req.method, req.key, req.body);
    } catch (e) {
      error = e;
    }
    if (r !== null && req.ok.includes(r.status)) return r;
    if (attempt >= tries || (r !== null && !passing(r.status))) throw failure(c, what, r, error);
    const wait = Math.min(4000, backoff * 2 ** (attempt - 1));
    await new Promise((res) => setTimeout(res, wait / 2 + Math.random() * wait / 2));
  }
}

/** A blob store on the bucket and prefix of `target`. */
export function s3BlobStore(target: S3Target, opts: S3BlobOptions = {}): S3BlobStore {
  const secrets = [target.credentials.secretAccessKey, target.credentials.sessionToken]
    .filter((s): s is string => !!s);
  const c: Client = {
    target,
    opts,
    where: describeTarget(target),
    clean: (text) => secrets.reduce((t, s) => t.split(s).join("***"), text),
  };
  const key = (id: string) => blobKey(target, id);

  async function has(id: string): Promise<boolean> {
    if (!ID.test(id)) return false;
    const r = await request(c, `look for blob ${id}`, {
      method: "HEAD",
      key: key(id),
      ok: [200, 404],
    });
    return r.status === 200;
  }

  return {
    async put(content) {
      const bytes = bytesOf(content).slice();
      const id = blobId(bytes);
      if (bytes.length > HEAD_FIRST_BYTES && await has(id)) return id;
      await request(c, `store blob ${id}`, { method: "PUT", key: key(id), ok: [200], body: bytes });
      return id;
    },
    async get(id) {
      if (!ID.test(id)) return null;
      const r = await request(c, `read blob ${id}`, {
        method: "GET",
        key: key(id),
        ok: [200, 404],
      });
      if (r.status === 404) {
        // A missing object is an absent blob; a missing bucket is not.
        if (s3Error(new TextDecoder().decode(r.bytes))?.code === "NoSuchBucket") {
          throw failure(c, `read blob ${id}`, r);
        }
        return null;
      }
      if (blobId(r.bytes) !== id) {
        throw new DvergrError("IO", `Blob ${id} in ${c.where} does not hold the bytes of its id`, {
          hint: "Something other than dvergr wrote that object; remove it and rerun what wrote it",
        });
      }
      return r.bytes;
    },
    has,
    async checkBucket() {
      await request(c, "use the bucket", { method: "HEAD", key: null, ok: [200] });
    },
  };
}
