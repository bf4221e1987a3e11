import { type Code, ConnectError } from "@connectrpc/connect";
import { errorInfoOf } from "@qrplatform/platform";

/** What a failed call reported: its code, reason, metadata and field violations. */
export interface CallError {
  code: Code;
  reason: string | undefined;
  metadata: Record<string, string>;
  fields: { field: string; reason: string }[];
  message: string;
}

/** Awaits a call that must fail and describes its error. */
export async function errorOf(call: Promise<unknown>): Promise<CallError> {
  try {
    await call;
  } catch (error) {
    const e = ConnectError.from(error);
    const info = errorInfoOf(e);
    return {
      code: e.code,
      reason: info?.reason,
      metadata: { ...(info?.metadata ?? {}) },
      fields: (info?.fieldViolations ?? []).map((v) => ({ field: v.field, reason: v.reason })),
      message: e.rawMessage,
    };
  }
  throw new Error("expected the call to fail, but it succeeded");
}
