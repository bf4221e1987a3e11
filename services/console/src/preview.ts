// Images the API draws: the design editor's live preview, and a code's export. The preview is the
// platform's own drawing of the design being edited (POST /qr-codes/preview), judged as the create
// will judge it and encoding a placeholder link as long as a real one, so what the editor shows is
// what the export of the code will draw; nothing is stored for it.
import type { ApiClient } from "@qrplatform/api-client";
import { call } from "./api.ts";
import type { DesignInput } from "./design.ts";

/** `design` drawn as a PNG of `size` pixels; `signal` abandons it (and the API stops drawing it). */
export async function drawPreview(
  api: ApiClient,
  design: DesignInput,
  { size = 384, signal }: { size?: number; signal?: AbortSignal } = {},
): Promise<Blob> {
  const answer = await api.POST("/qr-codes/preview", {
    body: { design, format: "png", size },
    parseAs: "blob",
    signal,
  });
  return call(Promise.resolve(answer as { data?: Blob; error?: unknown; response: Response }));
}

/** A code's export as a Blob. */
export async function exportImage(
  api: ApiClient,
  id: string,
  format: "png" | "svg" | "jpg",
  size: number,
): Promise<Blob> {
  const answer = await api.GET("/qr-codes/{id}/export", {
    params: { path: { id }, query: { format, size } },
    parseAs: "blob",
  });
  return call(Promise.resolve(answer as { data?: Blob; error?: unknown; response: Response }));
}
