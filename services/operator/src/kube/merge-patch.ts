// JSON merge patches (RFC 7386) that take one stored value to another: what changed is set, and what
// is gone is set to null, at every depth, so no stale field survives the patch.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The merge patch that turns `from` into `to` (objects merged key by key, arrays replaced). */
export function mergePatch(from: unknown, to: unknown): Json {
  const target = JSON.parse(JSON.stringify(to ?? null)) as Json;
  if (!isRecord(from) || !isRecord(target)) return target;
  const patch: Record<string, Json> = {};
  for (const key of Object.keys(from)) {
    if (!(key in target)) patch[key] = null;
  }
  for (const [key, value] of Object.entries(target)) {
    patch[key] = isRecord(from[key]) && isRecord(value) ? mergePatch(from[key], value) : value;
  }
  return patch;
}
