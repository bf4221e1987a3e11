// What a list page of codes costs to map, stage by stage, in CPU per page on one thread: the catalog's
// rows to protos (StoredRoutings parsing the routing text once per code), the ListQrCodes answer encoded
// and decoded as the services shape sends it between processes (the embedded platform hands the message
// over as it is), and the edge's protos to the REST JSON it writes. Pages of codes without rules and with
// BENCH_LIST_RULES (20) rules each (the rules of `npm run bench:api`'s list-rules), so the stages that
// grow with rules show, and the extra a page with rules costs each shape is set against the page without.
// No Postgres, HTTP or gRPC server: `npm run bench:api` measures whole requests.
//
//   tsx tools/bench/list-mapping.ts
import { randomUUID } from "node:crypto";
import { loadavg } from "node:os";
import { create, fromBinary, toBinary, toJson } from "@bufbuild/protobuf";
import { ListQrCodesResponseSchema, type QrCode } from "@qrplatform/api/catalog";
import { LinkRoutingSchema } from "@qrplatform/api/links";
import { DesignSchema } from "@qrplatform/api/rendering";
import { ruleOf } from "@qrplatform/routing";
import { qrCodeToProto } from "../../services/catalog/src/qr-codes/qr-code-mapping.js";
import type { ProvisionedQrCodeRow } from "../../services/catalog/src/qr-codes/qr-codes.table.js";
import { storedRoutings } from "../../services/catalog/src/qr-codes/stored-routings.js";
import { qrCodeJson } from "../../services/edge/src/resources/qr-codes.js";
import { normalizeDesign } from "../../services/rendering/src/design/design-rules.js";
import { failingRules, RULE_COUNTRIES } from "./failing-rules.js";

const RULES = Number(process.env.BENCH_LIST_RULES ?? 20);
const PAGE = 10;
const ITERATIONS = 2000;

/** A stored code as a read selects it: the routing column as text. */
function storedCode(rules: number): ProvisionedQrCodeRow {
  const routing =
    rules === 0
      ? null
      : JSON.stringify(
          toJson(
            LinkRoutingSchema,
            create(LinkRoutingSchema, {
              rules: failingRules(rules, RULE_COUNTRIES).map((rule) => ({ ...ruleOf(rule), id: randomUUID() })),
            }),
          ),
        );
  return {
    id: randomUUID(),
    account_id: randomUUID(),
    workspace_id: randomUUID(),
    name: "Menu",
    destination_url: "https://example.com/menu",
    status: "active",
    tags: [],
    link_id: randomUUID(),
    vanity_domain_id: null,
    vanity_url: "https://qr.example/abc123",
    canonical_url: "https://qr.example/abc123",
    design: toJson(DesignSchema, normalizeDesign(undefined).design),
    utm: null,
    routing,
    created_at: new Date(),
    updated_at: new Date(),
    pending_operation: null,
    pending_since: null,
    idempotency_key: null,
    idempotency_fingerprint: null,
  };
}

/** Microseconds of CPU (user and system) per call of `work`, after a warm-up. */
function cpuMicrosPer(work: () => unknown): number {
  for (let i = 0; i < ITERATIONS / 10; i++) work();
  const before = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) work();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / ITERATIONS;
}

function stagesOf(rules: number) {
  const rows = Array.from({ length: PAGE }, () => storedCode(rules));
  const routings = storedRoutings();
  const now = new Date();
  const toProtos = () => rows.map((row) => qrCodeToProto(row, 0n, now, routings));
  const encode = (qrCodes: QrCode[]) =>
    toBinary(ListQrCodesResponseSchema, create(ListQrCodesResponseSchema, { qrCodes }));
  const toRest = (qrCodes: QrCode[]) =>
    JSON.stringify({ data: qrCodes.map((qrCode) => qrCodeJson(qrCode, "https://api.example/api/v1")) });
  const protos = toProtos();
  const bytes = encode(protos);
  const decoded = fromBinary(ListQrCodesResponseSchema, bytes).qrCodes;
  return {
    bytes: bytes.length,
    json: toRest(decoded).length,
    catalog: cpuMicrosPer(toProtos),
    encode: cpuMicrosPer(() => encode(protos)),
    decode: cpuMicrosPer(() => fromBinary(ListQrCodesResponseSchema, bytes)),
    // The edge as the embedded platform runs it (the catalog's own protos) and over the network (new ones).
    edgeEmbedded: cpuMicrosPer(() => toRest(protos)),
    edgeServices: cpuMicrosPer(() => toRest(fromBinary(ListQrCodesResponseSchema, bytes).qrCodes)),
  };
}

console.log(
  `Load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}; CPU per page of ${PAGE} codes, µs\n`,
);
console.log(
  "| rules per code | protobuf bytes | JSON bytes | catalog rows → protos | encode | decode | edge → JSON (embedded) | edge: decode → JSON (services) |",
);
console.log("|---:|---:|---:|---:|---:|---:|---:|---:|");
const results = [0, RULES].map((rules) => ({ rules, ...stagesOf(rules) }));
for (const r of results) {
  console.log(
    `| ${r.rules} | ${r.bytes} | ${r.json} | ${r.catalog.toFixed(0)} | ${r.encode.toFixed(0)} | ${r.decode.toFixed(0)} | ${r.edgeEmbedded.toFixed(0)} | ${r.edgeServices.toFixed(0)} |`,
  );
}
const [plain, routed] = results as [(typeof results)[0], (typeof results)[0]];
const embeddedExtra = routed.catalog + routed.edgeEmbedded - (plain.catalog + plain.edgeEmbedded);
const servicesExtra =
  routed.catalog + routed.encode + routed.edgeServices - (plain.catalog + plain.encode + plain.edgeServices);
console.log(
  `\nWhat ${RULES} rules a code add to a page's mapping: embedded ${embeddedExtra.toFixed(0)} µs, services ${servicesExtra.toFixed(0)} µs ` +
    `(of which encoding and decoding the rules ${(routed.encode + routed.decode - plain.encode - plain.decode).toFixed(0)} µs).`,
);
