/**
 * Where the PostgreSQL store's blobs go when they are kept in an S3-compatible object store
 * (`--blobs s3://BUCKET/PREFIX` or `DVERGR_BLOBS`), from the URL and the standard AWS
 * variables: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (temporary
 * credentials), AWS_REGION else AWS_DEFAULT_REGION (else us-east-1), and
 * AWS_ENDPOINT_URL_S3 else AWS_ENDPOINT_URL for another S3 (MinIO, Ceph, R2…), which is
 * addressed path-style (`ENDPOINT/BUCKET/KEY`); AWS itself virtual-hosted
 * (`https://BUCKET.s3.REGION.amazonaws.com/KEY`). What the environment does not hold comes
 * from the AWS profile it names in the shared files (aws_profile.ts: static keys, `region`,
 * `endpoint_url`), as the AWS CLI takes it. s3Target() is pure: the caller gives the
 * environment and the profile; blobsTarget() reads the profile's files, only when asked.
 * Nothing here prints a secret: describeTarget() names bucket, prefix and endpoint only.
 */
import { DvergrError, usageError } from "../../../core/errors.ts";
import { type Credentials, encodePath } from "./sigv4.ts";
import { type AwsProfile, profileCredentials, sharedProfile } from "./aws_profile.ts";

export interface S3Target {
  bucket: string;
  /** The key prefix, without leading or trailing slashes ("" for none). */
  prefix: string;
  /** Where requests go: the endpoint's origin (and base path, if any). */
  endpoint: URL;
  /** Keys under `endpoint/bucket/` (custom endpoints) rather than `bucket.endpoint/`. */
  pathStyle: boolean;
  region: string;
  credentials: Credentials;
}

type Env = (name: string) => string | undefined;

const HINT = "Give --blobs s3://BUCKET/PREFIX (or set DVERGR_BLOBS) with --store postgres://…";

/** Whether `value` names an S3 bucket. */
export function isS3Url(value: string): boolean {
  return /^s3:\/\//i.test(value);
}

/**
 * The blobs' URL from `--blobs` (else DVERGR_BLOBS), or null when neither is set; only
 * with a PostgreSQL store (`store`), whose blobs they are.
 */
export function blobsUrl(flag: string | undefined, env: Env, store: string | null): string | null {
  const value = flag ?? env("DVERGR_BLOBS");
  if (value === undefined || value === "") return null;
  if (!isS3Url(value)) {
    throw usageError(`Cannot keep blobs at "${value}": it is not an s3:// URL`, HINT);
  }
  if (store === null) {
    throw usageError(
      `Cannot keep blobs at ${value} without a PostgreSQL store: ${
        flag === undefined ? "DVERGR_BLOBS is set" : "--blobs is given"
      } but no --store (or DVERGR_STORE)`,
      "The embedded home keeps its blobs in its directory; give --store postgres://USER@HOST:PORT/DATABASE too, or unset DVERGR_BLOBS",
    );
  }
  return value;
}

/** The bucket's name as S3 allows it (3–63 of a–z 0–9 . -, a letter or digit at each end). */
function checkBucket(bucket: string, url: string): void {
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw usageError(
      `Cannot keep blobs at ${url}: "${bucket}" is not a bucket name (3 to 63 of a-z 0-9 . -)`,
      HINT,
    );
  }
}

/** The profile of the shared files, read when first needed (null: none). */
type Profile = () => AwsProfile | null;

function endpointOf(
  env: Env,
  region: string,
  profile: Profile,
): { endpoint: URL; custom: boolean } {
  const given = env("AWS_ENDPOINT_URL_S3") || env("AWS_ENDPOINT_URL") ||
    profile()?.settings.get("endpoint_url");
  if (!given) return { endpoint: new URL(`https://s3.${region}.amazonaws.com`), custom: false };
  let endpoint: URL;
  try {
    endpoint = new URL(given);
  } catch {
    throw usageError(
      `Cannot use the S3 endpoint "${given}": it is not a URL`,
      "Set AWS_ENDPOINT_URL_S3 to http(s)://HOST[:PORT]",
    );
  }
  if (!/^https?:$/.test(endpoint.protocol) || endpoint.username || endpoint.password) {
    throw usageError(
      `Cannot use the S3 endpoint ${endpoint.origin}: it must be http(s)://HOST[:PORT] without credentials`,
      "Credentials go in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
    );
  }
  endpoint.search = "";
  endpoint.hash = "";
  return { endpoint, custom: true };
}

/**
 * The target `url` names, with what `env` says (credentials, region, endpoint), else what
 * the shared files' `profile` says.
 */
export function s3Target(url: string, env: Env, profile: Profile = () => null): S3Target {
  const m = url.match(/^s3:\/\/([^/?#]*)\/?([^?#]*)$/i);
  if (!m) throw usageError(`Cannot keep blobs at "${url}": write s3://BUCKET/PREFIX`, HINT);
  const bucket = m[1];
  checkBucket(bucket, url);
  const prefix = m[2].replace(/^\/+|\/+$/g, "");
  if (prefix.split("/").some((p) => p === "." || p === "..")) {
    throw usageError(`Cannot keep blobs at ${url}: its prefix has a . or .. segment`, HINT);
  }
  const credentials = credentialsOf(url, env, profile);
  const region = env("AWS_REGION") || env("AWS_DEFAULT_REGION") ||
    profile()?.settings.get("region") || "us-east-1";
  if (!/^[a-z0-9-]+$/.test(region)) {
    throw usageError(
      `Cannot use the S3 region "${region}"`,
      "Set AWS_REGION to a region name such as eu-west-1 (auto for R2)",
    );
  }
  const { endpoint, custom } = endpointOf(env, region, profile);
  return {
    bucket,
    prefix,
    endpoint,
    // Virtual-hosted names put the bucket in a TLS host name: one with dots would not match
    // AWS's certificate, so such a bucket goes path-style as on custom endpoints.
    pathStyle: custom || bucket.includes("."),
    region,
    credentials,
  };
}

/**
 * The keys from the environment (both, with AWS_SESSION_TOKEN when set), else from the
 * profile (profileCredentials(): its static keys or an error saying why it has none), else
 * an error naming the variable missing.
 */
function credentialsOf(url: string, env: Env, profile: Profile): Credentials {
  const accessKeyId = env("AWS_ACCESS_KEY_ID");
  const secretAccessKey = env("AWS_SECRET_ACCESS_KEY");
  if (accessKeyId && secretAccessKey) {
    const sessionToken = env("AWS_SESSION_TOKEN") || undefined;
    return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
  }
  const shared = accessKeyId || secretAccessKey ? null : profile();
  if (shared) return profileCredentials(shared);
  throw new DvergrError(
    "API_KEY_MISSING",
    `Cannot keep blobs at ${url}: ${
      accessKeyId ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID"
    } is not set${accessKeyId || secretAccessKey ? "" : ", and no AWS profile has keys"}`,
    {
      hint:
        "Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary credentials) in this command's environment, or AWS_PROFILE to a profile of ~/.aws/credentials",
    },
  );
}

/** The object key of a blob: `PREFIX/ID[0:2]/ID`. */
export function blobKey(target: S3Target, id: string): string {
  const key = `${id.slice(0, 2)}/${id}`;
  return target.prefix === "" ? key : `${target.prefix}/${key}`;
}

/**
 * The URL of an object (`key`), or of the bucket itself (null), its path encoded as SigV4
 * signs it (so what is sent is what was signed).
 */
export function objectUrl(target: S3Target, key: string | null): URL {
  const base = target.endpoint.pathname.replace(/\/+$/, "");
  const url = new URL(target.endpoint.toString());
  const path = target.pathStyle
    ? `/${target.bucket}${key === null ? "" : `/${key}`}`
    : `/${key ?? ""}`;
  if (!target.pathStyle) url.hostname = `${target.bucket}.${url.hostname}`;
  url.pathname = base + encodePath(path);
  return url;
}

/** The target as it may be printed: bucket, prefix and endpoint, never a credential. */
export function describeTarget(target: S3Target): string {
  const where = target.prefix === "" ? target.bucket : `${target.bucket}/${target.prefix}`;
  return `s3://${where} at ${target.endpoint.origin}`;
}

/**
 * The target of `--blobs` (else DVERGR_BLOBS) for a command on `store`, or null when
 * neither is set: blobsUrl() and s3Target() at once, so a bad URL or a missing credential
 * is found before anything is opened; the shared files' profile is read when the
 * environment lacks something.
 */
export function blobsTarget(
  flag: string | undefined,
  env: Env,
  store: string | null,
): S3Target | null {
  const url = blobsUrl(flag, env, store);
  return url === null ? null : s3Target(url, env, sharedProfile(env));
}

/** s3Target() of `url` with the environment's profile from the shared files. */
export function s3TargetWithProfile(url: string, env: Env): S3Target {
  return s3Target(url, env, sharedProfile(env));
}
