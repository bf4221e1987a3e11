import { z } from "zod";

/** Thrown when the environment does not satisfy a service's configuration schema. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * Reads configuration from environment variables through a zod schema, so every process fails at
 * start with one message naming every bad variable instead of failing later on first use.
 */
export function readConfig<Schema extends z.ZodType>(
  schema: Schema,
  env: Record<string, string | undefined> = process.env,
): z.infer<Schema> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `  ${issue.path.join(".") || "(env)"}: ${issue.message}`);
  throw new ConfigError(`Invalid configuration:\n${problems.join("\n")}`);
}

/** An environment variable holding a TCP port number. */
export const portVar = (defaultPort: number) => z.coerce.number().int().min(0).max(65535).default(defaultPort);

/** An environment variable holding a secret of at least 32 characters. */
export const secretVar = () => z.string().min(32, "must be at least 32 characters");

/** An optional environment variable that treats the empty string as unset. */
export const optionalVar = <T extends z.ZodType>(inner: T) =>
  z.preprocess((value) => (value === "" ? undefined : value), inner.optional());

/** The log level variable shared by every process. */
export const logLevelVar = () => z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info");
