import type { Request, RequestHandler, Response } from "express";
import { ApiAccess, type Account, type Plan } from "@qrplatform/api/tenancy";
import { ApiError } from "./api-error.js";
import type { AuthenticateKey } from "./key-cache.js";

/** Who is calling: the key and the account it acts for. Every route reads the account id from here. */
export interface Caller {
  readonly accountId: string;
  readonly apiKeyId: string;
  readonly scopes: ReadonlySet<string>;
  readonly account: Account;
  readonly plan: Plan;
  /** The key's hourly request limit as tenancy decided it; undefined means unlimited. */
  readonly hourlyRequestLimit: bigint | undefined;
}

const BEARER = /^Bearer ([^\s]+)$/i;
const CHALLENGE = { "WWW-Authenticate": 'Bearer realm="qr-platform"' };

/** The caller of an authenticated request. */
export function callerOf(res: Response): Caller {
  const caller = res.locals.caller as Caller | undefined;
  if (!caller) throw new Error("route is missing the authenticate middleware");
  return caller;
}

function bearerSecret(req: Request): string {
  const header = req.get("authorization");
  if (!header) {
    throw new ApiError(
      401,
      "missing_api_key",
      "Send your API key in the Authorization header: `Bearer <key>`.",
      undefined,
      CHALLENGE,
    );
  }
  const match = BEARER.exec(header);
  if (!match) {
    throw new ApiError(401, "invalid_api_key", "The Authorization header must be `Bearer <key>`.", undefined, {
      "WWW-Authenticate": 'Bearer error="invalid_request"',
    });
  }
  return match[1]!;
}

/**
 * Authenticates the bearer key with tenancy, or with the edge's cache of tenancy's answers (unknown,
 * expired and revoked keys come back as 401 `invalid_api_key`), refuses accounts whose plan or status
 * has no API access, and requires `scope`.
 */
export function authenticate(authenticateKey: AuthenticateKey, scope: string): RequestHandler {
  return async (req, res, next) => {
    const found = await authenticateKey(bearerSecret(req));
    if (found.apiAccess === ApiAccess.PLAN_NOT_ELIGIBLE) {
      throw new ApiError(
        403,
        "plan_not_eligible",
        "Public API access is available on the Origin, Thrive, Scale and Enterprise plans; upgrade this account to use it.",
      );
    }
    if (found.apiAccess !== ApiAccess.ALLOWED) {
      throw new ApiError(
        403,
        "account_inactive",
        "This account's subscription is not active, so its API keys are suspended.",
      );
    }
    const scopes = new Set(found.apiKey!.scopes);
    if (!scopes.has(scope)) {
      throw new ApiError(403, "insufficient_scope", `This API key lacks the "${scope}" scope.`, {
        required_scope: scope,
      });
    }
    res.locals.caller = {
      accountId: found.account!.id,
      apiKeyId: found.apiKey!.id,
      scopes,
      account: found.account!,
      plan: found.plan!,
      hourlyRequestLimit: found.hourlyRequestLimit,
    } satisfies Caller;
    next();
  };
}
