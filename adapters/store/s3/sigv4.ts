/**
 * AWS Signature Version 4 for S3 requests (the `Authorization` header), written on
 * node:crypto: the canonical request, the string to sign, the signing key derived from the
 * secret and the scope, and the signature. Checked against AWS's published examples
 * (tests/adapters/store/s3/sigv4_test.ts) and verified by the fake S3 server of the tests
 * with the same functions, so a request a real S3 would refuse is refused there too.
 * Pure: no effect, no clock (the caller gives the time).
 */
import { createHash, createHmac } from "node:crypto";

/** The SHA-256 of no bytes: the payload hash of a request without a body. */
export const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials' token (AWS_SESSION_TOKEN), sent as x-amz-security-token. */
  sessionToken?: string;
}

export interface SignInput {
  method: string;
  /** The request's path as sent, already URI-encoded (encodePath()). */
  path: string;
  /** Query parameters, not encoded. */
  query?: [string, string][];
  /** Every header to sign, `host` and `x-amz-date` and `x-amz-content-sha256` among them. */
  headers: Record<string, string>;
  /** Hex SHA-256 of the body (or `UNSIGNED-PAYLOAD`). */
  payloadHash: string;
  region: string;
  service?: string;
}

const sha256Hex = (text: string | Uint8Array) => createHash("sha256").update(text).digest("hex");
const hmac = (key: string | Uint8Array, text: string) =>
  new Uint8Array(createHmac("sha256", key).update(text).digest());

/** RFC 3986 encoding as SigV4 wants it: everything but A–Z a–z 0–9 - _ . ~ as %XX. */
export function uriEncode(text: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(text)) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** A path's segments encoded, its slashes kept (S3 encodes a key once). */
export function encodePath(path: string): string {
  return path.split("/").map(uriEncode).join("/");
}

/** `20130524T000000Z` for a time (ms since the epoch). */
export function amzDate(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
}

/** The canonical request: method, path, sorted query, sorted headers, their names, hash. */
export function canonicalRequest(input: SignInput): { text: string; signedHeaders: string } {
  const query = [...(input.query ?? [])]
    .map(([k, v]) => [uriEncode(k), uriEncode(v)])
    .sort(([a, x], [b, y]) => a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0)
    .map(([k, v]) => `${k}=${v}`).join("&");
  const headers = Object.entries(input.headers)
    .map(([k, v]) => [k.toLowerCase(), v.trim().replace(/\s+/g, " ")] as const)
    .sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
  const signedHeaders = headers.map(([k]) => k).join(";");
  const text = [
    input.method.toUpperCase(),
    input.path === "" ? "/" : input.path,
    query,
    headers.map(([k, v]) => `${k}:${v}\n`).join(""),
    signedHeaders,
    input.payloadHash,
  ].join("\n");
  return { text, signedHeaders };
}

/** The header value of x-amz-date among `headers`, whatever its case. */
function dateOf(headers: Record<string, string>): string {
  const v = Object.entries(headers).find(([k]) => k.toLowerCase() === "x-amz-date")?.[1];
  if (v === undefined || !/^\d{8}T\d{6}Z$/.test(v.trim())) {
    throw new Error("A SigV4 request needs an x-amz-date header (YYYYMMDDTHHMMSSZ)");
  }
  return v.trim();
}

/** The signature (hex) of a request by `secret`, and what went into it. */
export function signature(
  input: SignInput,
  secret: string,
): { signature: string; scope: string; signedHeaders: string; stringToSign: string } {
  const date = dateOf(input.headers);
  const service = input.service ?? "s3";
  const scope = `${date.slice(0, 8)}/${input.region}/${service}/aws4_request`;
  const canonical = canonicalRequest(input);
  const stringToSign = ["AWS4-HMAC-SHA256", date, scope, sha256Hex(canonical.text)].join("\n");
  let key = hmac(`AWS4${secret}`, date.slice(0, 8));
  for (const part of [input.region, service, "aws4_request"]) key = hmac(key, part);
  const sig = createHmac("sha256", key).update(stringToSign).digest("hex");
  return { signature: sig, scope, signedHeaders: canonical.signedHeaders, stringToSign };
}

/** The Authorization header of a request signed with `creds`. */
export function authorization(input: SignInput, creds: Credentials): string {
  const s = signature(input, creds.secretAccessKey);
  return `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${s.scope},` +
    `SignedHeaders=${s.signedHeaders},Signature=${s.signature}`;
}

/** The parts of an Authorization header, or null when it is not a SigV4 one. */
export function parseAuthorization(
  header: string,
): { accessKeyId: string; scope: string; signedHeaders: string[]; signature: string } | null {
  const m = header.match(
    /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/([^,\s]+),\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/,
  );
  if (!m) return null;
  return { accessKeyId: m[1], scope: m[2], signedHeaders: m[3].split(";"), signature: m[4] };
}

/** Hex SHA-256 of a body. */
export function payloadHash(body: Uint8Array): string {
  return sha256Hex(body);
}
