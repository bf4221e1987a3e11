import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";

/** A protobuf timestamp as the API's RFC 3339 date-time string (UTC, milliseconds). */
export function dateTime(timestamp: Timestamp | undefined): string | null {
  return timestamp ? timestampDate(timestamp).toISOString() : null;
}

/** An optional protobuf int64 as a JSON number, null when unset (which means "unlimited" for limits). */
export function optionalCount(value: bigint | undefined): number | null {
  return value === undefined ? null : Number(value);
}
