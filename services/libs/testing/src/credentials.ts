// The secrets every test platform runs with, defined once: long enough for the services' checks, and
// obviously fake.

/** The two bearer tokens of the gRPC services: callers (edge, catalog) and administrators (qrctl, operator). */
export const credentials = { serviceToken: "s".repeat(32), adminToken: "a".repeat(32) } as const;

/** The key that signs page tokens (cursors). */
export const PAGE_TOKEN_SECRET = "p".repeat(32);

/** The key that makes scans' visitor keys. */
export const VISITOR_KEY_SECRET = "v".repeat(32);

/** The same secrets as a service process reads them from its environment. */
export const SECRETS_ENV = {
  SERVICE_TOKEN: credentials.serviceToken,
  ADMIN_TOKEN: credentials.adminToken,
  PAGE_TOKEN_SECRET,
  VISITOR_KEY_SECRET,
} as const;
