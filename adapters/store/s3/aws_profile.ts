/**
 * The AWS shared files, for `--blobs s3://…` when the environment does not hold the
 * credentials, the region or the endpoint itself: the profile named by AWS_PROFILE (else
 * AWS_DEFAULT_PROFILE, else `default`) in the credentials file (AWS_SHARED_CREDENTIALS_FILE,
 * else ~/.aws/credentials: sections `[NAME]`) and the config file (AWS_CONFIG_FILE, else
 * ~/.aws/config: `[default]` and `[profile NAME]`), as the AWS CLI and SDKs read them. A key
 * in the credentials file wins over the same key in the config file; the caller lets the
 * environment win over both (target.ts).
 *
 * Only what needs no other service: static keys (`aws_access_key_id`,
 * `aws_secret_access_key`, `aws_session_token`), `region` and `endpoint_url`. A profile that
 * gets its credentials another way (a role to assume, a credential process, SSO, a web
 * identity) is refused with the command that exports them (`aws configure
 * export-credentials`), rather than taken as having none.
 *
 * Nothing here prints a value: errors name the file, its line, the profile and the key.
 */
import { join } from "../../../core/path.ts";
import { DvergrError, usageError } from "../../../core/errors.ts";

type Env = (name: string) => string | undefined;

/** The keys of one profile, merged from both files, and where they were read. */
export interface AwsProfile {
  name: string;
  settings: Map<string, string>;
  /** The files it was read from (for messages). */
  files: string[];
}

/** One shared file's text and path (null text: the file is not there). */
export interface SharedFile {
  path: string;
  text: string | null;
}

/** Keys of profiles whose credentials come from elsewhere, and what that is called. */
const INDIRECT: [string, string][] = [
  ["role_arn", "a role to assume (role_arn)"],
  ["credential_process", "a credential process"],
  ["sso_session", "AWS SSO (sso_session)"],
  ["sso_start_url", "AWS SSO (sso_start_url)"],
  ["web_identity_token_file", "a web identity token"],
];

/**
 * The sections of an INI file as the AWS tools write them: `[section]` lines, `key = value`
 * lines, `#` and `;` comment lines. A nested block (a line indented under `key =`, as in an
 * `s3 =` sub-section) belongs to its key and is skipped. Any other line is an error naming
 * the file and line.
 */
export function parseSharedFile(file: SharedFile): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let current: Map<string, string> | null = null;
  (file.text ?? "").split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) return;
    if (/^\s/.test(raw) && current !== null) return; // a nested block's line
    const section = /^\[\s*([^\]]+?)\s*\]$/.exec(line);
    if (section) {
      current = sections.get(section[1]) ?? new Map();
      sections.set(section[1], current);
      return;
    }
    const kv = /^([A-Za-z0-9_.-]+)\s*=\s*(.*)$/.exec(line);
    if (!kv || current === null) {
      throw usageError(
        `Cannot read ${file.path} line ${i + 1}: ${
          current === null ? "a setting before any [section]" : "not a [section] or key = value"
        }`,
        "Fix the line (the AWS CLI's `aws configure` writes these files), or point AWS_CONFIG_FILE / AWS_SHARED_CREDENTIALS_FILE elsewhere",
      );
    }
    current.set(kv[1].toLowerCase(), kv[2].trim());
  });
  return sections;
}

/** The name of the profile the environment asks for. */
export function profileName(env: Env): string {
  return env("AWS_PROFILE") || env("AWS_DEFAULT_PROFILE") || "default";
}

/**
 * The profile `name` from the two files; null when neither has it and it was not asked for
 * by name (the default profile is optional). A profile asked for by name and found nowhere
 * is an error naming it and the files.
 */
export function awsProfile(
  credentials: SharedFile,
  config: SharedFile,
  name: string,
  askedByName: boolean,
): AwsProfile | null {
  const fromCredentials = parseSharedFile(credentials).get(name);
  const fromConfig = parseSharedFile(config).get(
    name === "default" ? "default" : `profile ${name}`,
  );
  if (!fromCredentials && !fromConfig) {
    if (!askedByName) return null;
    throw usageError(
      `Cannot use the AWS profile "${name}": it is in neither ${credentials.path} nor ${config.path}`,
      "Set AWS_PROFILE to a profile of those files, or unset it and give AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
    );
  }
  const settings = new Map([...(fromConfig ?? []), ...(fromCredentials ?? [])]);
  const files = [
    ...(fromCredentials ? [credentials.path] : []),
    ...(fromConfig ? [config.path] : []),
  ];
  return { name, settings, files };
}

/**
 * The profile's static keys, or an error when it has none: one that gets them another way
 * is told how to export them, one with half a key pair what is missing.
 */
export function profileCredentials(
  profile: AwsProfile,
): { accessKeyId: string; secretAccessKey: string; sessionToken?: string } {
  const s = profile.settings;
  const accessKeyId = s.get("aws_access_key_id");
  const secretAccessKey = s.get("aws_secret_access_key");
  const where = `the AWS profile "${profile.name}" (${profile.files.join(", ")})`;
  if (accessKeyId && secretAccessKey) {
    const sessionToken = s.get("aws_session_token");
    return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
  }
  const indirect = INDIRECT.find(([k]) => s.has(k));
  if (indirect && !accessKeyId && !secretAccessKey) {
    throw new DvergrError(
      "API_KEY_MISSING",
      `Cannot use ${where}: it gets its credentials from ${indirect[1]}, which dvergr does not ask`,
      {
        hint:
          `Export them into this command's environment: eval "$(aws configure export-credentials --profile ${profile.name} --format env)"`,
      },
    );
  }
  throw new DvergrError(
    "API_KEY_MISSING",
    `Cannot use ${where}: it has no ${accessKeyId ? "aws_secret_access_key" : "aws_access_key_id"}`,
    {
      hint:
        "Add aws_access_key_id and aws_secret_access_key to the profile, or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
    },
  );
}

/** A shared file's text, null when it is not there; another error names the file. */
function readShared(path: string): SharedFile {
  try {
    return { path, text: Deno.readTextFileSync(path) };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { path, text: null };
    throw usageError(
      `Cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`,
      "Make it readable, or point AWS_CONFIG_FILE / AWS_SHARED_CREDENTIALS_FILE elsewhere",
    );
  }
}

/**
 * The profile the environment names, read from the shared files once, when first asked (a
 * command whose environment holds everything never opens them); null when there is none.
 */
export function sharedProfile(env: Env): () => AwsProfile | null {
  let read: { profile: AwsProfile | null } | undefined;
  return () => {
    if (read) return read.profile;
    const home = env("HOME");
    const path = (variable: string, file: string) =>
      env(variable) || (home ? join(home, ".aws", file) : null);
    const credentials = path("AWS_SHARED_CREDENTIALS_FILE", "credentials");
    const config = path("AWS_CONFIG_FILE", "config");
    const askedByName = Boolean(env("AWS_PROFILE") || env("AWS_DEFAULT_PROFILE"));
    const none = (p: string | null): SharedFile => ({ path: p ?? "(no HOME)", text: null });
    read = {
      profile: awsProfile(
        credentials ? readShared(credentials) : none(credentials),
        config ? readShared(config) : none(config),
        profileName(env),
        askedByName,
      ),
    };
    return read.profile;
  };
}
