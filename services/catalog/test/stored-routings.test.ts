// The catalog parses a code's stored routing once and reuses it while the stored text is the same; a
// changed text, whichever process wrote it, is parsed again on the next read.
import { create, toJson } from "@bufbuild/protobuf";
import { LinkRoutingSchema } from "@qrplatform/api/links";
import { ruleOf } from "@qrplatform/routing";
import { describe, expect, it } from "vitest";
import { storedRoutings } from "../src/qr-codes/stored-routings.js";

const CODE = "0b6c3e0e-4c1f-4a8e-9a55-1d2f3c4b5a69";
const OTHER_CODE = "5f0d8b1e-7a3c-4e2b-8d9f-6c1a2b3c4d5e";

/** A routing column as a read takes it: the text of the stored JSON. */
const columnOf = (destination: string) =>
  JSON.stringify(
    toJson(
      LinkRoutingSchema,
      create(LinkRoutingSchema, {
        rules: [ruleOf({ conditions: { countries: ["JP"] }, destination_url: destination })],
      }),
    ),
  );

describe("the catalog's stored routings", () => {
  it("parses a code's routing once while its text is unchanged", () => {
    const routings = storedRoutings();
    const column = columnOf("https://example.jp/");
    const first = routings.of(CODE, column);
    expect(first.rules[0]!.destinationUrl).toBe("https://example.jp/");
    expect(routings.of(CODE, `${column}`)).toBe(first);
  });

  it("reads a changed text anew, and keeps each code apart", () => {
    const routings = storedRoutings();
    routings.of(CODE, columnOf("https://example.jp/"));
    expect(routings.of(CODE, columnOf("https://example.de/")).rules[0]!.destinationUrl).toBe("https://example.de/");
    expect(routings.of(OTHER_CODE, columnOf("https://example.fr/")).rules[0]!.destinationUrl).toBe(
      "https://example.fr/",
    );
    expect(routings.of(CODE, columnOf("https://example.de/")).rules[0]!.destinationUrl).toBe("https://example.de/");
  });

  it("takes the parsed JSON a write returns, and none for a code without routing", () => {
    const routings = storedRoutings();
    const parsed = JSON.parse(columnOf("https://example.jp/")) as unknown;
    expect(routings.of(CODE, parsed).rules[0]!.destinationUrl).toBe("https://example.jp/");
    expect(routings.of(CODE, null)).toEqual(create(LinkRoutingSchema));
  });

  it("forgets the least recently read codes beyond its size", () => {
    const column = columnOf("https://example.jp/");
    const routings = storedRoutings(column.length);
    const first = routings.of(CODE, column);
    routings.of(OTHER_CODE, column);
    expect(routings.of(CODE, column)).not.toBe(first);
    expect(routings.of(CODE, column)).toEqual(first);
  });
});
