import { timingSafeEqual } from "node:crypto";
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextKey, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { serviceError } from "../errors.js";

/** The two internal credentials: one that every service presents, one that only operators hold. */
export interface InternalCredentials {
  /** Presented by services calling each other; grants every non-admin RPC. */
  serviceToken: string;
  /** Presented by qrctl and the operator; grants every RPC, admin ones included. */
  adminToken: string;
}

/** Who made an internal call, as established by {@link requireInternalCredentials}. */
export type Caller = "service" | "admin";

/** The context value that tells a handler who its caller is. */
export const callerKey = createContextKey<Caller>("service", { description: "the authenticated internal caller" });

/** Services any client may call without a credential: probes and tooling must work before auth is set up. */
const OPEN_SERVICES = new Set(["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"]);

function tokenEquals(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The server side of internal authentication: a call must carry `authorization: Bearer <token>` with
 * the service or the admin credential, else UNAUTHENTICATED; admin-only services refuse the service
 * credential with PERMISSION_DENIED.
 */
export function requireInternalCredentials(
  credentials: InternalCredentials,
  adminOnly: readonly DescService[] = [],
): Interceptor {
  const adminOnlyNames = new Set(adminOnly.map((s) => s.typeName));
  return (next) => async (req) => {
    if (OPEN_SERVICES.has(req.service.typeName)) return next(req);
    const header = req.header.get("authorization") ?? "";
    const token = header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
    if (token && tokenEquals(token, credentials.adminToken)) {
      req.contextValues.set(callerKey, "admin");
      return next(req);
    }
    if (token && tokenEquals(token, credentials.serviceToken)) {
      if (adminOnlyNames.has(req.service.typeName)) {
        throw new ConnectError("This service requires the admin credential.", Code.PermissionDenied);
      }
      req.contextValues.set(callerKey, "service");
      return next(req);
    }
    throw new ConnectError("A valid internal credential is required.", Code.Unauthenticated);
  };
}

/**
 * Refuses the call unless it was made with the admin credential: PERMISSION_DENIED, reason
 * `admin_credential_required`. For the admin-only methods of a service that otherwise serves the
 * service credential too (a service that only admins may call is listed in `adminOnly` instead).
 */
export function requireAdmin(context: HandlerContext, rpc: string): void {
  if (context.values.get(callerKey) === "admin") return;
  throw serviceError(Code.PermissionDenied, "admin_credential_required", `${rpc} requires the admin credential.`);
}

/** The client side: attaches a credential to every outgoing call. */
export function presentCredential(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}
