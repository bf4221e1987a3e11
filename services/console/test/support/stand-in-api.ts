// What the console's component tests share: answers of a stand-in API, and a page mounted with a
// session whose client calls that stand-in instead of the network.
import { type ComponentChild, h, render } from "preact";
import { act } from "preact/test-utils";
import { consoleClient } from "../../src/api.ts";
import { SessionContext } from "../../src/ui.tsx";

/** A JSON answer, as the API gives one. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
}

/** The API's answer to a route the stand-in does not serve. */
export function routeNotFound(): Response {
  return json(404, { error: { code: "route_not_found", message: "No.", request_id: "req_404" } });
}

/** Renders `page` in a new element of the document, signed in with a client that calls `fetch`. */
export async function mountWithSession(
  page: ComponentChild,
  fetch: (input: Request) => Promise<Response>,
): Promise<{ root: HTMLElement; unmount: () => void }> {
  const root = document.createElement("div");
  document.body.append(root);
  const session = {
    api: consoleClient("qrp_test", () => {}, { fetch: fetch as unknown as typeof globalThis.fetch }),
    refreshAccount: () => {},
  };
  await act(() => render(h(SessionContext.Provider, { value: session }, page), root));
  return {
    root,
    unmount: () => {
      render(null, root);
      root.remove();
    },
  };
}
