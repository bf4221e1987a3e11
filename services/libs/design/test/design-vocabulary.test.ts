// The design's words have one home: the services that speak them take them from @qrplatform/design, and
// the public contract states the same export bounds.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { EXPORT_SIZE } from "@qrplatform/design";

const repo = join(import.meta.dirname, "../../../..");

function sourcesOf(dir: string): string[] {
  return readdirSync(join(repo, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => join(dir, file));
}

describe("the design vocabulary", () => {
  it.each(["services/edge/src", "services/catalog/src"])("is not taken from the rendering package by %s", (dir) => {
    const reaching = sourcesOf(dir).filter((file) =>
      readFileSync(join(repo, file), "utf8").includes("@qrplatform/rendering"),
    );
    expect(reaching).toEqual([]);
  });

  it.each(["/workspaces/{workspace_id}/qr-codes/export", "/qr-codes/{id}/export"])(
    "states the export size bounds in the contract for %s",
    (path) => {
      const contract = parse(readFileSync(join(repo, "services/edge/openapi/openapi.yaml"), "utf8"));
      const size = contract.paths[path].get.parameters.find((p: { name?: string }) => p.name === "size");
      expect(size.schema).toMatchObject({
        minimum: EXPORT_SIZE.min,
        maximum: EXPORT_SIZE.max,
        default: EXPORT_SIZE.default,
      });
    },
  );
});
