/**
 * adapters/store/s3/aws_profile.ts and its use by target.ts: the AWS shared files' profile
 * gives what the environment does not hold (keys, region, endpoint), the environment wins,
 * a profile that gets its keys elsewhere is refused with the command that exports them, and
 * no message holds a secret.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  awsProfile,
  parseSharedFile,
  profileCredentials,
  sharedProfile,
} from "../../../../adapters/store/s3/aws_profile.ts";
import { blobsTarget, s3Target } from "../../../../adapters/store/s3/target.ts";
import { DvergrError } from "../../../../core/errors.ts";

const SECRET = "wJalrXUtnFEMI/K7MDENG/profile-SECRET";

const CREDENTIALS = `# written by aws configure
[default]
aws_access_key_id = AKIDDEFAULT
aws_secret_access_key = ${SECRET}

[dev]
aws_access_key_id=AKIDDEV
aws_secret_access_key=${SECRET}-dev
aws_session_token = TOKEN-dev
`;

const CONFIG = `[default]
region = eu-west-1

; a profile's settings
[profile dev]
region = eu-central-1
endpoint_url = http://127.0.0.1:9000
s3 =
  max_concurrent_requests = 20

[profile assumed]
role_arn = arn:aws:iam::123456789012:role/r
source_profile = default

[profile half]
aws_access_key_id = AKIDHALF
`;

const file = (path: string, text: string | null) => ({ path, text });
const creds = file("/h/.aws/credentials", CREDENTIALS);
const config = file("/h/.aws/config", CONFIG);

/** The error `f` throws, which must be a DvergrError. */
function errorOf(f: () => unknown): DvergrError {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof DvergrError, String(e));
    assert.ok(!JSON.stringify({ m: e.message, h: e.hint }).includes(SECRET), "a secret told");
    return e;
  }
  throw new Error("no error");
}

Deno.test("parseSharedFile() reads sections and keys, skips comments and nested blocks, and names a bad line", () => {
  const sections = parseSharedFile(config);
  assert.deepEqual([...sections.keys()], [
    "default",
    "profile dev",
    "profile assumed",
    "profile half",
  ]);
  assert.deepEqual(Object.fromEntries(sections.get("profile dev")!), {
    region: "eu-central-1",
    endpoint_url: "http://127.0.0.1:9000",
    s3: "",
  });
  assert.deepEqual(parseSharedFile(file("/x", null)), new Map());
  const bad = errorOf(() => parseSharedFile(file("/h/.aws/config", "[default]\nregion eu\n")));
  assert.equal(bad.code, "USAGE");
  assert.match(
    bad.message,
    /^Cannot read \/h\/\.aws\/config line 2: not a \[section\] or key = value$/,
  );
  const early = errorOf(() => parseSharedFile(file("/c", "region = eu\n[default]\n")));
  assert.match(early.message, /line 1: a setting before any \[section\]/);
});

Deno.test("awsProfile() merges both files (the credentials file wins); the default is optional, a named one is not", () => {
  const dev = awsProfile(creds, config, "dev", true)!;
  assert.equal(dev.settings.get("region"), "eu-central-1");
  assert.equal(dev.settings.get("aws_access_key_id"), "AKIDDEV");
  assert.deepEqual(dev.files, ["/h/.aws/credentials", "/h/.aws/config"]);
  assert.deepEqual(profileCredentials(dev), {
    accessKeyId: "AKIDDEV",
    secretAccessKey: `${SECRET}-dev`,
    sessionToken: "TOKEN-dev",
  });
  // Config-only profiles are `[profile NAME]`; `[NAME]` there is not one.
  assert.equal(awsProfile(file("/c", null), file("/k", "[dev]\nregion = x\n"), "dev", false), null);
  assert.equal(awsProfile(file("/c", null), file("/k", null), "default", false), null);
  const missing = errorOf(() => awsProfile(creds, config, "prod", true));
  assert.match(
    missing.message,
    /^Cannot use the AWS profile "prod": it is in neither \/h\/\.aws\/credentials nor \/h\/\.aws\/config$/,
  );
});

Deno.test("profileCredentials() refuses a profile that gets its keys elsewhere, with the command that exports them, and half a pair", () => {
  const assumed = errorOf(() => profileCredentials(awsProfile(creds, config, "assumed", true)!));
  assert.equal(assumed.code, "API_KEY_MISSING");
  assert.match(
    assumed.message,
    /"assumed" \(\/h\/\.aws\/config\): it gets its credentials from a role to assume \(role_arn\)/,
  );
  assert.match(
    assumed.hint ?? "",
    /aws configure export-credentials --profile assumed --format env/,
  );
  const half = errorOf(() => profileCredentials(awsProfile(creds, config, "half", true)!));
  assert.match(half.message, /it has no aws_secret_access_key$/);
});

Deno.test("s3Target(): the environment wins over the profile; the profile gives keys, region and endpoint the environment lacks", () => {
  const profile = () => awsProfile(creds, config, "dev", true);
  const env = (vars: Record<string, string>) => (k: string) => vars[k];
  // Nothing in the environment: everything from the profile (a custom endpoint: path-style).
  const all = s3Target("s3://bucket/p", env({}), profile);
  assert.deepEqual(all.credentials, {
    accessKeyId: "AKIDDEV",
    secretAccessKey: `${SECRET}-dev`,
    sessionToken: "TOKEN-dev",
  });
  assert.equal(all.region, "eu-central-1");
  assert.equal(all.endpoint.origin, "http://127.0.0.1:9000");
  assert.equal(all.pathStyle, true);
  // The environment's keys, region and endpoint, each on its own.
  const mine = s3Target(
    "s3://bucket/p",
    env({
      AWS_ACCESS_KEY_ID: "AKIDENV",
      AWS_SECRET_ACCESS_KEY: "env-secret",
      AWS_REGION: "us-west-2",
      AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9999",
    }),
    profile,
  );
  assert.deepEqual(mine.credentials, { accessKeyId: "AKIDENV", secretAccessKey: "env-secret" });
  assert.equal(mine.region, "us-west-2");
  assert.equal(mine.endpoint.origin, "http://127.0.0.1:9999");
  // Half a pair in the environment is not completed from a profile.
  const half = errorOf(() =>
    s3Target("s3://bucket", env({ AWS_ACCESS_KEY_ID: "AKIDENV" }), profile)
  );
  assert.match(half.message, /AWS_SECRET_ACCESS_KEY is not set$/);
  // No keys anywhere.
  const none = errorOf(() => s3Target("s3://bucket", env({}), () => null));
  assert.match(none.message, /AWS_ACCESS_KEY_ID is not set, and no AWS profile has keys$/);
  assert.match(none.hint ?? "", /AWS_PROFILE/);
});

Deno.test("blobsTarget() reads the shared files the environment names, and only when the environment lacks something", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const credentials = join(dir, "credentials");
    const configFile = join(dir, "config");
    await Deno.writeTextFile(credentials, CREDENTIALS);
    await Deno.writeTextFile(configFile, CONFIG);
    const files = { AWS_SHARED_CREDENTIALS_FILE: credentials, AWS_CONFIG_FILE: configFile };
    const env = (vars: Record<string, string>) => (k: string) => vars[k];
    const store = "postgres://db/x";
    const viaDefault = blobsTarget("s3://bucket/p", env(files), store)!;
    assert.equal(viaDefault.credentials.accessKeyId, "AKIDDEFAULT");
    assert.equal(viaDefault.region, "eu-west-1");
    assert.equal(viaDefault.endpoint.origin, "https://s3.eu-west-1.amazonaws.com");
    const viaProfile = blobsTarget("s3://bucket/p", env({ ...files, AWS_PROFILE: "dev" }), store)!;
    assert.equal(viaProfile.credentials.accessKeyId, "AKIDDEV");
    // HOME's ~/.aws when no file is named.
    await Deno.mkdir(join(dir, "home", ".aws"), { recursive: true });
    await Deno.writeTextFile(join(dir, "home", ".aws", "credentials"), CREDENTIALS);
    const viaHome = blobsTarget("s3://bucket", env({ HOME: join(dir, "home") }), store)!;
    assert.equal(viaHome.credentials.accessKeyId, "AKIDDEFAULT");
    assert.equal(viaHome.region, "us-east-1");
    // An environment that holds everything never opens them (this one is not a shared file).
    await Deno.writeTextFile(configFile, "not an ini file\n");
    const full = {
      ...files,
      AWS_ACCESS_KEY_ID: "AKIDENV",
      AWS_SECRET_ACCESS_KEY: "env-secret",
      AWS_REGION: "eu-north-1",
      AWS_ENDPOINT_URL: "http://127.0.0.1:9",
    };
    assert.equal(blobsTarget("s3://bucket", env(full), store)!.region, "eu-north-1");
    const broken = errorOf(() => blobsTarget("s3://bucket", env(files), store));
    assert.match(broken.message, new RegExp(`Cannot read ${configFile} line 1`));
    // A profile named and found nowhere.
    const named = errorOf(() =>
      sharedProfile(
        env({
          AWS_PROFILE: "nope",
          AWS_SHARED_CREDENTIALS_FILE: credentials,
          AWS_CONFIG_FILE: join(dir, "none"),
        }),
      )()
    );
    assert.match(named.message, /"nope": it is in neither/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
