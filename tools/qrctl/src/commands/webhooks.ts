import { Option, type Command } from "commander";
import type {
  ApiClient,
  WebhookDelivery,
  WebhookDeliveryWithAttempts,
  WebhookEndpoint,
  WebhookEventType,
} from "@qrplatform/api-client";
import { listArg, pageSizeArg } from "../args.js";
import { CliError, usageError } from "../errors.js";
import { emit, fields, table } from "../output.js";

type DeliveryStatus = WebhookDelivery["status"];

/**
 * One call of the public API as the account of the key given (webhooks are an account's own, managed
 * with its API key): the answer's data, or the API's error as one line.
 */
async function call<T>(
  command: Command,
  request: (client: ApiClient) => Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  // Loaded only here, so the admin commands do not pay for the REST client at start.
  const { apiSession, describeApiError, unreachable } = await import("../api.js");
  const { client, baseUrl } = apiSession(command);
  let result: Awaited<ReturnType<typeof request>>;
  try {
    result = await request(client);
  } catch (error) {
    throw unreachable(baseUrl, error);
  }
  if (result.data !== undefined) return result.data;
  throw new CliError(describeApiError(result.response.status, result.error));
}

function endpointText(endpoint: WebhookEndpoint): string {
  return fields([
    ["ID", endpoint.id],
    ["URL", endpoint.url],
    ["Events", endpoint.event_types.join(", ")],
    [
      "Status",
      endpoint.status === "enabled"
        ? "enabled"
        : `disabled (${endpoint.disabled_reason}): ${endpoint.disabled_message ?? ""}`,
    ],
    ["Description", endpoint.description ?? "-"],
    ["Old secret until", endpoint.previous_secret_expires_at ?? "-"],
  ]);
}

const withSecret = (title: string, endpoint: WebhookEndpoint, secret: string) =>
  [title, endpointText(endpoint), "", "Signing secret (shown only once; store it now):", secret].join("\n");

/** `qrctl webhooks ...`: an account's webhook endpoints and their delivery logs, through the public API. */
export function registerWebhooks(program: Command): void {
  const webhooks = program
    .command("webhooks")
    .description("register and manage webhook endpoints of an account (with its API key) and read their delivery logs");

  webhooks
    .command("create")
    .description("register an endpoint; its signing secret is printed once")
    .requiredOption("--url <url>", "the https URL events are POSTed to")
    .requiredOption(
      "--events <types>",
      "comma-separated event types: qr_code.created, qr_code.updated, qr_code.deleted, qr_code.scanned, domain.verified",
      listArg,
    )
    .option("--description <text>", "a note for people")
    .action(async (options: { url: string; events: string[]; description?: string }, command: Command) => {
      const created = await call(command, (client) =>
        client.POST("/webhooks", {
          body: {
            url: options.url,
            event_types: options.events as WebhookEventType[],
            description: options.description,
          },
        }),
      );
      emit(command, created, () => withSecret("Created webhook endpoint", created, created.secret));
    });

  webhooks
    .command("list")
    .description("list the account's endpoints, oldest first")
    .option("--limit <n>", "endpoints per page, 1 to 100", pageSizeArg)
    .option("--cursor <cursor>", "the next_cursor of the previous page")
    .action(async (options: { limit?: number; cursor?: string }, command: Command) => {
      const page = await call(command, (client) =>
        client.GET("/webhooks", { params: { query: { limit: options.limit, cursor: options.cursor } } }),
      );
      emit(command, page, () =>
        page.data.length === 0
          ? "No webhook endpoints."
          : table(
              ["ID", "STATUS", "EVENTS", "URL"],
              page.data.map((e) => [e.id, e.status, e.event_types.join(","), e.url]),
            ) + (page.next_cursor ? `\n\nMore: --cursor ${page.next_cursor}` : ""),
      );
    });

  webhooks
    .command("get <id>")
    .description("show an endpoint, and why it is disabled if it is")
    .action(async (id: string, _options: unknown, command: Command) => {
      const endpoint = await call(command, (client) => client.GET("/webhooks/{id}", { params: { path: { id } } }));
      emit(command, endpoint, () => endpointText(endpoint));
    });

  webhooks
    .command("update <id>")
    .description("change an endpoint's URL, events or description, or enable or disable it")
    .option("--url <url>", "a new URL")
    .option("--events <types>", "the new comma-separated event types", listArg)
    .option("--description <text>", "a new description ('' keeps an empty one)")
    .option("--enable", "enable it (its waiting deliveries resume)")
    .option("--disable", "disable it (deliveries wait until it is enabled)")
    .action(
      async (
        id: string,
        options: { url?: string; events?: string[]; description?: string; enable?: boolean; disable?: boolean },
        command: Command,
      ) => {
        if (options.enable && options.disable) throw usageError("give --enable or --disable, not both");
        const endpoint = await call(command, (client) =>
          client.PATCH("/webhooks/{id}", {
            params: { path: { id } },
            body: {
              url: options.url,
              event_types: options.events as WebhookEventType[] | undefined,
              description: options.description,
              status: options.enable ? "enabled" : options.disable ? "disabled" : undefined,
            },
          }),
        );
        emit(command, endpoint, () => endpointText(endpoint));
      },
    );

  webhooks
    .command("delete <id>")
    .description("remove an endpoint and its delivery log")
    .action(async (id: string, _options: unknown, command: Command) => {
      const deleted = await call(command, (client) => client.DELETE("/webhooks/{id}", { params: { path: { id } } }));
      emit(command, deleted, () => `Deleted webhook endpoint ${deleted.id}.`);
    });

  webhooks
    .command("rotate-secret <id>")
    .description("give an endpoint a new secret; the old one keeps signing beside it for a while")
    .option(
      "--keep-old-for <seconds>",
      "seconds the old secret keeps signing, 0 to 604800 (default 86400)",
      (v: string) => {
        if (!/^\d+$/.test(v)) throw usageError("--keep-old-for must be a whole number of seconds");
        return Number(v);
      },
    )
    .action(async (id: string, options: { keepOldFor?: number }, command: Command) => {
      const rotated = await call(command, (client) =>
        client.POST("/webhooks/{id}/rotate-secret", {
          params: { path: { id } },
          body: options.keepOldFor === undefined ? {} : { previous_secret_expires_in: options.keepOldFor },
        }),
      );
      emit(command, rotated, () => withSecret("Rotated the signing secret", rotated, rotated.secret));
    });

  webhooks
    .command("deliveries <id>")
    .description("an endpoint's delivery log, oldest first unless --newest-first")
    .option("--limit <n>", "deliveries per page, 1 to 100", pageSizeArg)
    .option("--cursor <cursor>", "the next_cursor of the previous page (with the same --status and order)")
    .addOption(
      new Option("--status <status>", "only deliveries in this status").choices([
        "pending",
        "paused",
        "succeeded",
        "failed",
      ]),
    )
    .option("--newest-first", "the newest delivery first")
    .action(
      async (
        id: string,
        options: { limit?: number; cursor?: string; status?: DeliveryStatus; newestFirst?: boolean },
        command: Command,
      ) => {
        const query = {
          limit: options.limit,
          cursor: options.cursor,
          status: options.status,
          order: options.newestFirst ? ("newest_first" as const) : undefined,
        };
        const page = await call(command, (client) =>
          client.GET("/webhooks/{id}/deliveries", { params: { path: { id }, query } }),
        );
        const row = (d: WebhookDelivery) => [
          d.id,
          d.created_at,
          d.event_type,
          d.status,
          String(d.attempts),
          d.last_response_status ? String(d.last_response_status) : "-",
          d.last_error ?? "",
        ];
        emit(command, page, () =>
          page.data.length === 0
            ? "No deliveries."
            : table(["ID", "CREATED", "EVENT", "STATUS", "ATTEMPTS", "LAST HTTP", "LAST ERROR"], page.data.map(row)) +
              (page.next_cursor ? `\n\nMore: --cursor ${page.next_cursor}` : ""),
        );
      },
    );

  webhooks
    .command("delivery <id> <delivery-id>")
    .description("one delivery of an endpoint, with every attempt made for it")
    .action(async (id: string, deliveryId: string, _options: unknown, command: Command) => {
      const delivery = await call(command, (client) =>
        client.GET("/webhooks/{id}/deliveries/{delivery_id}", { params: { path: { id, delivery_id: deliveryId } } }),
      );
      const row = (a: WebhookDeliveryWithAttempts["attempt_log"][number]) => [
        String(a.attempt),
        a.attempted_at,
        `${a.duration_ms} ms`,
        a.response_status ? String(a.response_status) : "-",
        a.error ?? "",
      ];
      emit(command, delivery, () =>
        [
          `Delivery ${delivery.id} of event ${delivery.event_id} (${delivery.event_type}): ${delivery.status}` +
            (delivery.next_attempt_at ? `, next attempt at ${delivery.next_attempt_at}` : ""),
          delivery.attempt_log.length === 0
            ? "No attempts recorded yet."
            : table(["ATTEMPT", "SENT", "TOOK", "HTTP", "ERROR"], delivery.attempt_log.map(row)),
        ].join("\n\n"),
      );
    });
}
