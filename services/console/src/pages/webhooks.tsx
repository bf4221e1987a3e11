import { useState } from "preact/hooks";
import type { WebhookEndpoint, WebhookEventType } from "@qrplatform/api-client";
import { call, idempotencyKey } from "../api.ts";
import { ErrorNotice, FieldError, fieldProblems, useLoad, useSession } from "../ui.tsx";

const EVENT_TYPES: readonly WebhookEventType[] = [
  "qr_code.created",
  "qr_code.updated",
  "qr_code.deleted",
  "qr_code.scanned",
  "domain.verified",
];
type DeliveryStatus = "pending" | "paused" | "succeeded" | "failed";

export function WebhooksPage() {
  const { api } = useSession();
  const endpoints = useLoad(() => call(api.GET("/webhooks", { params: { query: { limit: 100 } } })), [api]);
  const [secret, setSecret] = useState<{ url: string; secret: string } | undefined>(undefined);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  const update = async (endpoint: WebhookEndpoint, status: "enabled" | "disabled") => {
    try {
      await call(api.PATCH("/webhooks/{id}", { params: { path: { id: endpoint.id } }, body: { status } }));
      setError(undefined);
      endpoints.reload();
    } catch (cause) {
      setError(cause);
    }
  };
  const rotate = async (endpoint: WebhookEndpoint) => {
    try {
      const rotated = await call(
        api.POST("/webhooks/{id}/rotate-secret", {
          params: { path: { id: endpoint.id }, header: { "Idempotency-Key": idempotencyKey() } },
          body: {},
        }),
      );
      setSecret({ url: endpoint.url, secret: rotated.secret });
      setError(undefined);
    } catch (cause) {
      setError(cause);
    }
  };
  const remove = async (endpoint: WebhookEndpoint) => {
    try {
      await call(api.DELETE("/webhooks/{id}", { params: { path: { id: endpoint.id } } }));
      if (selected === endpoint.id) setSelected(undefined);
      endpoints.reload();
    } catch (cause) {
      setError(cause);
    }
  };

  return (
    <section aria-labelledby="webhooks-heading">
      <h1 id="webhooks-heading">Webhooks</h1>
      <CreateEndpoint
        onCreated={(url, created) => {
          setSecret({ url, secret: created });
          endpoints.reload();
        }}
      />
      {secret && (
        <div class="secret" role="status">
          <p>
            The signing secret of <span class="text">{secret.url}</span>. It is shown this once: copy it now.
          </p>
          <label for="webhook-secret">Signing secret</label>
          <input id="webhook-secret" readOnly value={secret.secret} size={50} />
          <button type="button" onClick={() => setSecret(undefined)}>
            I have copied it
          </button>
        </div>
      )}
      <ErrorNotice error={endpoints.error ?? error} />
      {endpoints.data && endpoints.data.data.length === 0 && <p>No webhook endpoints yet.</p>}
      {endpoints.data && endpoints.data.data.length > 0 && (
        <table>
          <caption class="visually-hidden">Webhook endpoints</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">Status</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {endpoints.data.data.map((endpoint) => (
              <tr key={endpoint.id}>
                <td class="text">{endpoint.url}</td>
                <td>{endpoint.event_types.join(", ")}</td>
                <td>
                  {endpoint.status === "enabled"
                    ? "Enabled"
                    : `Disabled${endpoint.disabled_message ? `: ${endpoint.disabled_message}` : ""}`}
                </td>
                <td class="actions">
                  <button
                    type="button"
                    aria-label={`${endpoint.status === "enabled" ? "Disable" : "Enable"} ${endpoint.url}`}
                    onClick={() => update(endpoint, endpoint.status === "enabled" ? "disabled" : "enabled")}
                  >
                    {endpoint.status === "enabled" ? "Disable" : "Enable"}
                  </button>
                  <button
                    type="button"
                    aria-label={`Rotate secret of ${endpoint.url}`}
                    onClick={() => rotate(endpoint)}
                  >
                    Rotate secret
                  </button>
                  <button
                    type="button"
                    aria-label={`Deliveries of ${endpoint.url}`}
                    onClick={() => setSelected(endpoint.id)}
                  >
                    Deliveries
                  </button>
                  <button type="button" aria-label={`Delete ${endpoint.url}`} onClick={() => remove(endpoint)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {selected && <Deliveries endpointId={selected} />}
    </section>
  );
}

function CreateEndpoint({ onCreated }: { onCreated: (url: string, secret: string) => void }) {
  const { api } = useSession();
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<WebhookEventType[]>(["qr_code.created", "qr_code.scanned"]);
  const [error, setError] = useState<unknown>(undefined);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      const created = await call(
        api.POST("/webhooks", {
          params: { header: { "Idempotency-Key": idempotencyKey() } },
          body: { url, event_types: events },
        }),
      );
      setError(undefined);
      setUrl("");
      onCreated(created.url, created.secret);
    } catch (cause) {
      setError(cause);
    }
  };
  const problems = fieldProblems(error);
  return (
    <form onSubmit={submit} class="panel" aria-label="New webhook endpoint">
      <label for="webhook-url">Endpoint URL</label>
      <input
        id="webhook-url"
        type="url"
        required
        value={url}
        onInput={(e) => setUrl(e.currentTarget.value)}
        {...(problems.url && { "aria-invalid": true, "aria-describedby": "webhook-url-error" })}
      />
      <FieldError id="webhook-url-error" message={problems.url} />
      <fieldset>
        <legend>Events</legend>
        {EVENT_TYPES.map((type) => (
          <div key={type}>
            <input
              id={`event-${type}`}
              type="checkbox"
              checked={events.includes(type)}
              onChange={(e) =>
                setEvents(e.currentTarget.checked ? [...events, type] : events.filter((t) => t !== type))
              }
            />
            <label for={`event-${type}`}>{type}</label>
          </div>
        ))}
        <FieldError id="webhook-events-error" message={problems.event_types} />
      </fieldset>
      <button type="submit">Add endpoint</button>
      {Object.keys(problems).length === 0 && <ErrorNotice error={error} />}
    </form>
  );
}

function Deliveries({ endpointId }: { endpointId: string }) {
  const { api } = useSession();
  const [status, setStatus] = useState<DeliveryStatus | "">("");
  const deliveries = useLoad(
    () =>
      call(
        api.GET("/webhooks/{id}/deliveries", {
          params: { path: { id: endpointId }, query: { limit: 50, order: "newest_first", ...(status && { status }) } },
        }),
      ),
    [api, endpointId, status],
  );
  const [open, setOpen] = useState<string | undefined>(undefined);
  const attempts = useLoad(
    () =>
      open
        ? call(
            api.GET("/webhooks/{id}/deliveries/{delivery_id}", {
              params: { path: { id: endpointId, delivery_id: open } },
            }),
          )
        : Promise.resolve(undefined),
    [api, endpointId, open],
  );
  return (
    <section aria-labelledby="deliveries-heading" class="panel">
      <h2 id="deliveries-heading">Delivery log</h2>
      <div class="inline">
        <label for="delivery-status">Delivery status</label>
        <select
          id="delivery-status"
          value={status}
          onChange={(e) => setStatus(e.currentTarget.value as DeliveryStatus | "")}
        >
          <option value="">Any</option>
          <option value="pending">Pending</option>
          <option value="paused">Paused</option>
          <option value="succeeded">Succeeded</option>
          <option value="failed">Failed</option>
        </select>
        <button type="button" onClick={deliveries.reload}>
          Refresh
        </button>
      </div>
      <ErrorNotice error={deliveries.error ?? attempts.error} />
      {deliveries.data && deliveries.data.data.length === 0 && <p>No deliveries.</p>}
      {deliveries.data && deliveries.data.data.length > 0 && (
        <table>
          <caption class="visually-hidden">Deliveries</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Created</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.data.data.map((delivery) => (
              <tr key={delivery.id}>
                <td>{delivery.event_type}</td>
                <td>{delivery.status}</td>
                <td>{delivery.attempts}</td>
                <td class="text">{delivery.last_response_status ?? delivery.last_error ?? "—"}</td>
                <td>{delivery.created_at}</td>
                <td>
                  <button
                    type="button"
                    onClick={() => setOpen(delivery.id)}
                    aria-label={`Attempts of ${delivery.event_type} delivery ${delivery.id}`}
                  >
                    Attempts
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {attempts.data && (
        <table>
          <caption>Attempts of delivery {attempts.data.id}</caption>
          <thead>
            <tr>
              <th scope="col">Attempt</th>
              <th scope="col">When</th>
              <th scope="col">Took</th>
              <th scope="col">Answer</th>
            </tr>
          </thead>
          <tbody>
            {attempts.data.attempt_log.length === 0 && (
              <tr>
                <td colSpan={4}>Not attempted yet.</td>
              </tr>
            )}
            {attempts.data.attempt_log.map((attempt) => (
              <tr key={attempt.attempt}>
                <td>{attempt.attempt}</td>
                <td>{attempt.attempted_at}</td>
                <td>{attempt.duration_ms} ms</td>
                <td class="text">{attempt.response_status ?? attempt.error ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
