// The design editor's live preview. The API has no operation that draws a design without a code
// (a design is set when a code is created and never changed), so the preview is the real export of a
// draft: a paused code named "Console preview", created with the design being edited, exported, and
// deleted as soon as a newer design replaces it, the code is created, or the page is left. What the
// editor shows is therefore exactly what the export draws; only the link it encodes (the draft's own)
// differs from the final code's.
import type { ApiClient } from "@qrplatform/api-client";
import { call, idempotencyKey } from "./api.ts";
import type { DesignInput } from "./design.ts";

/** Where drafts point: the image encodes the short link, never the destination. */
const DRAFT_DESTINATION = "https://example.com/";
export const DRAFT_NAME = "Console preview";
export const DRAFT_TAG = "console-preview";

/** A drawn preview: the image's object URL and the draft code to delete when it is replaced. */
export interface Preview {
  imageUrl: string;
  draftId: string;
}

/** Creates a draft with `design` in `workspaceId`, exports it as a PNG and returns both. */
export async function drawPreview(
  api: ApiClient,
  workspaceId: string,
  design: DesignInput,
  size = 384,
): Promise<Preview> {
  const draft = await call(
    api.POST("/workspaces/{workspace_id}/qr-codes", {
      params: { path: { workspace_id: workspaceId }, header: { "Idempotency-Key": idempotencyKey() } },
      body: { name: DRAFT_NAME, destination_url: DRAFT_DESTINATION, tags: [DRAFT_TAG], design },
    }),
  );
  try {
    await call(api.PATCH("/qr-codes/{id}", { params: { path: { id: draft.id } }, body: { status: "paused" } }));
    const image = await exportImage(api, draft.id, "png", size);
    return { imageUrl: URL.createObjectURL(image), draftId: draft.id };
  } catch (error) {
    await discardDraft(api, draft.id);
    throw error;
  }
}

/**
 * Deletes a draft; a failure leaves a paused code tagged console-preview, which the list shows.
 * `keepalive` lets the request outlive the page, for a tab being closed or reloaded.
 */
export async function discardDraft(api: ApiClient, draftId: string, { keepalive = false } = {}): Promise<void> {
  await api.DELETE("/qr-codes/{id}", { params: { path: { id: draftId } }, keepalive }).catch(() => undefined);
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
