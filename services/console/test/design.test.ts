import { describe, expect, it } from "vitest";
import { DEFAULT_DESIGN, designControlOf, toDesignInput } from "../src/design.ts";

// The design editor's state becomes the API's DesignInput; the API's refusals find their control again.
describe("the design editor's mapping", () => {
  it("sends the defaults as the API's defaults, and no frame, logo or error correction unless chosen", () => {
    expect(toDesignInput(DEFAULT_DESIGN)).toEqual({
      foreground: "#000000",
      background: "#ffffff",
      style: "square",
      cornerSquareShape: "square",
      cornerDotShape: "square",
      size: 1024,
    });
  });

  it("sends a frame with its labels only when it is enabled, and leaves blank labels out", () => {
    const framed = {
      ...DEFAULT_DESIGN,
      frameEnabled: true,
      frameType: "circle" as const,
      frameColor: "#123456",
      labelTop: "Scan me",
      labelBottom: "  ",
    };
    expect(toDesignInput(framed).frame).toEqual({
      enabled: true,
      type: "circle",
      color: "#123456",
      borderThickness: 8,
      labelTop: "Scan me",
    });
    expect(toDesignInput({ ...framed, frameEnabled: false }).frame).toBeUndefined();
  });

  it("sends a logo URL with its scale as a number, and the chosen error correction", () => {
    const design = toDesignInput({
      ...DEFAULT_DESIGN,
      logoUrl: " https://example.com/logo.png ",
      logoScale: "0.25",
      errorCorrection: "H",
    });
    expect(design.logo).toEqual({ url: "https://example.com/logo.png", scale: 0.25 });
    expect(design.errorCorrection).toBe("H");
    expect(toDesignInput({ ...DEFAULT_DESIGN, logoUrl: "   " }).logo).toBeUndefined();
  });

  it("keeps each chosen shape and colour as the API names them", () => {
    const design = toDesignInput({
      ...DEFAULT_DESIGN,
      style: "dots",
      cornerSquareShape: "circle",
      cornerDotShape: "rounded",
      foreground: "#0a0a0a",
    });
    expect(design).toMatchObject({
      style: "dots",
      cornerSquareShape: "circle",
      cornerDotShape: "rounded",
      foreground: "#0a0a0a",
    });
  });

  it("puts each refused design field beside its control", () => {
    expect(designControlOf("design.cornerDotShape")).toBe("cornerDotShape");
    expect(designControlOf("design.frame.labelTop")).toBe("labelTop");
    expect(designControlOf("design.logo.scale")).toBe("logoScale");
    expect(designControlOf("design.foreground")).toBe("foreground");
    expect(designControlOf("name")).toBeUndefined();
  });
});
