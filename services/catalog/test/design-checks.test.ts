// The catalog keeps rendering's answers for designs without a logo: the cache alone, against a stand-in
// for the rendering service. The calls a create makes are counted in services/edge/test/key-cache.test.ts.
import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import {
  DesignSchema,
  ValidateDesignResponseSchema,
  type Design,
  type RenderingService,
} from "@qrplatform/api/rendering";
import { rememberedDesignChecks } from "../src/qr-codes/design-check.js";

/** A stand-in for rendering: refuses a white foreground, counts the calls. */
function fakeRendering() {
  const asked: (Design | undefined)[] = [];
  const client = {
    async validateDesign({ design }: { design?: Design }) {
      asked.push(design);
      if (design?.foreground === "#ffffff") throw new ConnectError("low contrast", Code.InvalidArgument);
      return create(ValidateDesignResponseSchema, {
        design: create(DesignSchema, { foreground: design?.foreground || "#000000" }),
      });
    },
  };
  return { asked, client: client as unknown as Client<typeof RenderingService> };
}

describe("the catalog's checked designs", () => {
  it("asks rendering once per design without a logo, every time for a logo, and keeps no refusal", async () => {
    const rendering = fakeRendering();
    const check = rememberedDesignChecks(rendering.client);
    const navy = () => create(DesignSchema, { foreground: "#1a237e" });

    expect((await check(navy())).design?.foreground).toBe("#1a237e");
    expect((await check(navy())).design?.foreground).toBe("#1a237e");
    expect((await check(undefined)).design?.foreground).toBe("#000000");
    await check(undefined);
    expect(rendering.asked).toHaveLength(2);

    await check(create(DesignSchema, { foreground: "#1a237f" }));
    expect(rendering.asked).toHaveLength(3);

    const withLogo = () =>
      create(DesignSchema, { foreground: "#1a237e", logo: { dataUri: "data:image/png;base64,AAAA" } });
    await check(withLogo());
    await check(withLogo());
    expect(rendering.asked).toHaveLength(5);

    const white = () => create(DesignSchema, { foreground: "#ffffff" });
    await expect(check(white())).rejects.toMatchObject({ code: Code.InvalidArgument });
    await expect(check(white())).rejects.toMatchObject({ code: Code.InvalidArgument });
    expect(rendering.asked).toHaveLength(7);
  });

  it("asks again once an answer is older than its time to live", async () => {
    const rendering = fakeRendering();
    const check = rememberedDesignChecks(rendering.client, { ttlMs: 20 });
    await check(undefined);
    await new Promise((resolve) => setTimeout(resolve, 40));
    await check(undefined);
    expect(rendering.asked).toHaveLength(2);
  });
});
