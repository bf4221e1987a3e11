// The API benchmark's ceiling (api.ts): one node:http process with pg, sharing nothing with the services
// but their schema. It answers the benchmarked routes with the SQL a monolith would run by hand: the key
// looked up by its hash together with its account, then a list page, one code, a capacity-checked
// create in one transaction, or an export answered with bytes read once from a file (the same bytes the
// platform's cached export sends). Hourly counts are kept in a Map, as a single process would.
// Usage: api-ceiling.ts <image file>; DATABASE_URL names the database. Prints {"port": n} once listening.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const image = await readFile(process.argv[2]!);
const counts = new Map<string, number>();
/** Capacities of the plans the bench uses; the platform keeps them in code too. */
const QR_CODE_CAPACITY: Record<string, number | null> = { origin: 100, thrive: 500, scale: 5000, enterprise: null };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Principal {
  key_id: string;
  account_id: string;
  name: string;
  slug: string;
  subscription_tier: string;
  subscription_status: string;
  addons: string[];
  hourly_request_limit_override: string | null;
  created_at: Date;
  updated_at: Date;
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  res.end(text);
}

async function authenticate(req: http.IncomingMessage): Promise<Principal | undefined> {
  const secret = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1];
  if (!secret) return undefined;
  const { rows } = await pool.query<Principal>(
    `select k.id as key_id, a.id as account_id, a.name, a.slug, a.subscription_tier, a.subscription_status, a.addons,
            a.hourly_request_limit_override, a.created_at, a.updated_at
       from tenancy.api_keys k join tenancy.accounts a on a.id = k.account_id
      where k.secret_sha256 = $1 and k.revoked_at is null and (k.expires_at is null or k.expires_at > now())`,
    [createHash("sha256").update(secret).digest("hex")],
  );
  const principal = rows[0];
  if (principal) counts.set(principal.key_id, (counts.get(principal.key_id) ?? 0) + 1);
  return principal;
}

const codeJson = (row: Record<string, unknown>, scans: string | undefined) => ({
  ...row,
  total_scans: Number(scans ?? 0),
});

async function withTotals(accountId: string, rows: Record<string, unknown>[]) {
  if (rows.length === 0) return [];
  const { rows: totals } = await pool.query<{ link_id: string; scans: string }>(
    "select link_id, scans from links.scan_totals where account_id = $1 and link_id = any($2::uuid[])",
    [accountId, rows.map((row) => row.link_id)],
  );
  const byLink = new Map(totals.map((t) => [t.link_id, t.scans]));
  return rows.map((row) => codeJson(row, byLink.get(row.link_id as string)));
}

const CODE_COLUMNS =
  "id, account_id, workspace_id, name, destination_url, status, tags, link_id, vanity_url, canonical_url, design, utm, created_at, updated_at";

async function findCode(accountId: string, id: string) {
  if (!UUID.test(id)) return undefined;
  const { rows } = await pool.query(
    `select ${CODE_COLUMNS} from catalog.qr_codes where account_id = $1 and id = $2 and pending_operation is distinct from 'create'`,
    [accountId, id],
  );
  return rows[0] as Record<string, unknown> | undefined;
}

async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

/** Reserves a place in the account's capacity, makes the link and the code, all in one transaction. */
async function createCode(principal: Principal, workspaceId: string, body: { name: string; destination_url: string }) {
  const client = await pool.connect();
  try {
    await client.query("begin");
    const workspace = await client.query("select 1 from catalog.workspaces where account_id = $1 and id = $2", [
      principal.account_id,
      workspaceId,
    ]);
    if (workspace.rowCount === 0) {
      await client.query("rollback");
      return { status: 404 as const };
    }
    await client.query("insert into catalog.account_capacity_locks (account_id) values ($1) on conflict do nothing", [
      principal.account_id,
    ]);
    await client.query("select account_id from catalog.account_capacity_locks where account_id = $1 for update", [
      principal.account_id,
    ]);
    const capacity = QR_CODE_CAPACITY[principal.subscription_tier];
    if (capacity !== null && capacity !== undefined) {
      const { rows } = await client.query<{ n: number }>(
        "select count(*)::int as n from catalog.qr_codes where account_id = $1",
        [principal.account_id],
      );
      if (rows[0]!.n >= capacity) {
        await client.query("rollback");
        return { status: 403 as const };
      }
    }
    const linkId = randomUUID();
    const slug = randomBytes(5)
      .toString("base64url")
      .toLowerCase()
      .replace(/[^a-z0-9]/g, "a");
    const vanityUrl = `http://127.0.0.1/${slug}`;
    await client.query(
      "insert into links.links (id, account_id, slug, destination_url, status) values ($1, $2, $3, $4, 'active')",
      [linkId, principal.account_id, slug, body.destination_url],
    );
    const { rows } = await client.query(
      `insert into catalog.qr_codes (id, account_id, workspace_id, name, destination_url, status, tags, link_id, vanity_url, canonical_url, design)
       values ($1, $2, $3, $4, $5, 'active', '{}', $6, $7, $7, '{}') returning ${CODE_COLUMNS}`,
      [randomUUID(), principal.account_id, workspaceId, body.name, body.destination_url, linkId, vanityUrl],
    );
    await client.query("commit");
    return { status: 201 as const, code: codeJson(rows[0] as Record<string, unknown>, "0") };
  } catch (error) {
    await client.query("rollback").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url!, "http://ceiling");
  const path = url.pathname.replace(/^\/api\/v1/, "");
  const principal = await authenticate(req);
  if (!principal) return send(res, 401, { error: { code: "invalid_api_key" } });
  if (
    principal.subscription_status !== "active" &&
    principal.subscription_status !== "trialing" &&
    principal.subscription_status !== "past_due"
  ) {
    return send(res, 403, { error: { code: "account_inactive" } });
  }
  const segments = path.split("/").filter(Boolean);
  if (req.method === "GET" && path === "/account") {
    const { key_id: _key, account_id: id, ...account } = principal;
    return send(res, 200, { id, ...account });
  }
  if (req.method === "GET" && path === "/qr-codes") {
    const limit = Number(url.searchParams.get("limit") ?? 20);
    const { rows } = await pool.query(
      `select ${CODE_COLUMNS} from catalog.qr_codes where account_id = $1 and pending_operation is distinct from 'create'
        order by created_at, id limit $2`,
      [principal.account_id, limit + 1],
    );
    const page = rows.slice(0, limit) as Record<string, unknown>[];
    return send(res, 200, {
      data: await withTotals(principal.account_id, page),
      next_cursor: rows.length > limit ? "more" : null,
    });
  }
  if (req.method === "GET" && segments[0] === "qr-codes" && segments.length === 2) {
    const code = await findCode(principal.account_id, segments[1]!);
    if (!code) return send(res, 404, { error: { code: "not_found" } });
    return send(res, 200, (await withTotals(principal.account_id, [code]))[0]);
  }
  if (req.method === "GET" && segments[0] === "qr-codes" && segments[2] === "export") {
    const code = await findCode(principal.account_id, segments[1]!);
    if (!code) return send(res, 404, { error: { code: "not_found" } });
    res.writeHead(200, { "content-type": "image/png", "content-length": image.length });
    res.end(image);
    return;
  }
  if (req.method === "POST" && segments[0] === "workspaces" && segments[2] === "qr-codes") {
    const created = await createCode(
      principal,
      segments[1]!,
      (await readBody(req)) as { name: string; destination_url: string },
    );
    return created.status === 201
      ? send(res, 201, created.code)
      : send(res, created.status, { error: { code: "refused" } });
  }
  send(res, 404, { error: { code: "route_not_found" } });
}

const server = http.createServer((req, res) => {
  route(req, res).catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    if (!res.headersSent) send(res, 500, { error: { code: "internal_error" } });
  });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
process.once("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  void pool.end().then(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
