import { describe, expect, it } from "vitest";
import { isEdgeUrl } from "../src/server.js";

// Which requests a process serving short links beside the edge hands to the edge (the API, its
// documents, health checks) and which straight to its redirector.
describe("the edge's own URLs", () => {
  it.each([
    "/api",
    "/api/v1",
    "/api/v1/workspaces?limit=5",
    "/API/v1/",
    "/healthz",
    "/HEALTHZ/",
    "/readyz?x=1",
    "/docs",
    "/docs/assets/swagger-ui.css",
    "/console",
    "/console/",
    "/console/qr-codes/new",
    "/api;x",
  ])("%s is the edge's", (url) => expect(isEdgeUrl(url)).toBe(true));

  it.each(["/", "/abc123", "/abc123?utm=1", "/apix", "/docsy", "/consoles", "/my-menu/", "/healthzz"])(
    "%s is a short link's",
    (url) => expect(isEdgeUrl(url)).toBe(false),
  );

  it("leaves odd request targets to the edge, which still falls back to the redirector for what it does not own", () => {
    expect(isEdgeUrl("*")).toBe(true);
    expect(isEdgeUrl("http://s.qr.example/abc123")).toBe(true);
  });
});
