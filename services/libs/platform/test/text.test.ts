// The one text rule every door applies: what it refuses, what it keeps, and the reason it gives.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Code, errorInfoOf, INVALID_CHARACTERS, textProblem, textSchema, validate } from "@qrplatform/platform";

describe("storable text", () => {
  it.each([
    ["NUL", "a\u0000b"],
    ["a C0 control", "bell\u0007"],
    ["escape", "\u001b[31mred"],
    ["DEL", "x\u007f"],
    ["a C1 control", "next line\u0085"],
    ["a byte-order mark", "\ufeffname"],
    ["a lone high surrogate", "\ud800"],
    ["a lone low surrogate", "tail\udfff"],
    ["a line break in a single line", "two\nlines"],
    ["a tab in a single line", "a\tb"],
  ])("refuses %s", (_what, value) => {
    expect(textProblem(value)).toBeDefined();
  });

  it.each([
    ["plain"],
    ["ünïcödé ✓"],
    ["😀 outside the BMP"],
    ["\u2060word joiner"],
    ["\u00a0no-break\u00a0"],
    ["\u200b"],
    ["right-to-left \u202e"],
    [""],
  ])("keeps %j", (value) => {
    expect(textProblem(value)).toBeUndefined();
    expect(textProblem(value, "multi")).toBeUndefined();
  });

  it("lets descriptions span lines, but still refuses the other controls", () => {
    expect(textProblem("line one\r\nline two\ttabbed", "multi")).toBeUndefined();
    expect(textProblem("a\u0000b", "multi")).toBeDefined();
    expect(textProblem("\u000b", "multi")).toBeDefined();
  });

  it("answers invalid_characters naming the field, in a zod schema", () => {
    const schema = z.object({ displayName: textSchema().trim().min(1) });
    try {
      validate(schema, { displayName: "bad\u0000" });
      expect.unreachable();
    } catch (error) {
      const info = errorInfoOf(error as never);
      expect((error as { code: Code }).code).toBe(Code.InvalidArgument);
      expect(info?.fieldViolations.map((f) => [f.field, f.reason])).toEqual([["display_name", INVALID_CHARACTERS]]);
    }
    expect(validate(schema, { displayName: "  kept  " })).toEqual({ displayName: "kept" });
  });
});
