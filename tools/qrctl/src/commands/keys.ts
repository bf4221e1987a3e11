import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Command } from "commander";
import { TenancyAdminService, type ApiKey } from "@qrplatform/api/tenancy";
import { durationArg, listArg } from "../args.js";
import { emit, fields, isoTime, shortTime, table } from "../output.js";
import { callService, present } from "../session.js";

/** A key as --json prints it. It never holds the secret: only `keys create` has that, once. */
export function keyJson(key: ApiKey) {
  return {
    id: key.id,
    account_id: key.accountId,
    name: key.name,
    scopes: [...key.scopes],
    display_prefix: key.displayPrefix,
    created_at: isoTime(key.createTime),
    expires_at: isoTime(key.expireTime),
    revoked_at: isoTime(key.revokeTime),
  };
}

/** A key's status, in the words the REST API uses for a key it refuses: revoked or expired, else active. */
function statusOf(key: ApiKey, now = new Date()): string {
  if (key.revokeTime) return "revoked";
  if (key.expireTime && timestampDate(key.expireTime) <= now) return "expired";
  return "active";
}

/** `qrctl keys ...`: API keys for the public API. */
export function registerKeys(program: Command): void {
  const keys = program.command("keys").description("issue, list and revoke API keys");

  keys
    .command("create")
    .description("issue an API key for an account; its secret is printed once and never again")
    .requiredOption("--account <account-id>", "the account the key acts for")
    .option("--name <name>", "a label for the key, at most 100 characters")
    .option(
      "--scopes <scopes>",
      "comma-separated scopes and roles, such as qr_codes:read,workspaces:write or role:viewer (default: every scope)",
      listArg,
    )
    .option(
      "--expires-in <duration>",
      "lifetime such as 30d, 12h, 90m, 3600s or 1d12h (default: never expires)",
      durationArg,
    )
    .action(
      async (options: { account: string; name?: string; scopes?: string[]; expiresIn?: number }, command: Command) => {
        const response = await callService(command, TenancyAdminService, (admin) =>
          admin.createApiKey({
            accountId: options.account,
            name: options.name ?? "",
            scopes: options.scopes ?? [],
            timeToLive: options.expiresIn === undefined ? undefined : { seconds: BigInt(options.expiresIn) },
          }),
        );
        const key = present(response.apiKey, "API key");
        const { revoked_at: _, ...json } = keyJson(key);
        emit(command, { ...json, key: response.secret }, () =>
          [
            "Created API key",
            fields([
              ["ID", key.id],
              ["Account", key.accountId],
              ["Name", key.name || "-"],
              ["Scopes", key.scopes.join(", ")],
              ["Prefix", key.displayPrefix],
              ["Expires", shortTime(key.expireTime, "never")],
            ]),
            "",
            "Secret (shown only once; store it now, the platform keeps only a hash and cannot show it again):",
            response.secret,
          ].join("\n"),
        );
      },
    );

  keys
    .command("list")
    .description("list an account's keys, newest first, revoked ones included; secrets are never shown")
    .requiredOption("--account <account-id>", "the account whose keys to list")
    .action(async (options: { account: string }, command: Command) => {
      const response = await callService(command, TenancyAdminService, (admin) =>
        admin.listApiKeys({ accountId: options.account }),
      );
      emit(command, { keys: response.apiKeys.map(keyJson) }, () =>
        response.apiKeys.length === 0
          ? `No API keys for account ${options.account}.`
          : table(
              ["ID", "NAME", "PREFIX", "STATUS", "CREATED", "EXPIRES", "SCOPES"],
              response.apiKeys.map((k) => [
                k.id,
                k.name || "-",
                k.displayPrefix,
                statusOf(k),
                shortTime(k.createTime),
                shortTime(k.expireTime, "never"),
                k.scopes.join(","),
              ]),
            ),
      );
    });

  keys
    .command("revoke")
    .description("revoke a key at once; revoking a revoked key changes nothing")
    .argument("<key-id>", "the key's id")
    .action(async (keyId: string, _options: object, command: Command) => {
      const response = await callService(command, TenancyAdminService, (admin) =>
        admin.revokeApiKey({ apiKeyId: keyId }),
      );
      const key = present(response.apiKey, "API key");
      emit(
        command,
        keyJson(key),
        () =>
          `Revoked API key ${key.id} (${key.displayPrefix}…) of account ${key.accountId} at ${shortTime(key.revokeTime)}.`,
      );
    });
}
