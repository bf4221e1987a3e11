// Each handler is named after its RPC, so routes.ts reads as a list of RPCs rather than a table of aliases.
import { describe, expect, it } from "vitest";
import { IdempotencyKeyService, TenancyAdminService, TenancyService } from "@qrplatform/api/tenancy";
import * as accounts from "../src/accounts/accounts.handlers.js";
import * as idempotencyKeys from "../src/idempotency/idempotency-keys.handlers.js";
import * as apiKeys from "../src/keys/api-keys.handlers.js";

const handlers: Record<string, unknown> = { ...accounts, ...idempotencyKeys, ...apiKeys };

describe("tenancy's handlers", () => {
  it.each([TenancyService, IdempotencyKeyService, TenancyAdminService])(
    "has one named after each RPC of $typeName",
    (service) => {
      const missing = service.methods
        .map((method) => method.localName)
        .filter((name) => typeof handlers[name] !== "function");
      expect(missing).toEqual([]);
    },
  );
});
