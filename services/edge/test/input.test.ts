// The edge's own body checks: however many fields are wrong, the error names at most 20 and counts
// the rest, without spreading the problems over the call stack.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MAX_FIELD_PROBLEMS } from "@qrplatform/platform";
import { ApiError } from "../src/http/api-error.js";
import { parseInput } from "../src/http/input.js";

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("the input was accepted");
}

describe("parseInput", () => {
  const schema = z.strictObject({ name: z.string(), tags: z.array(z.string()) });

  it("names at most 20 of 200,000 invalid elements and counts the rest", () => {
    const error = refusal(() =>
      parseInput(schema, { name: "x", tags: Array.from({ length: 200_000 }, () => 1) }, { id: "read_only" }),
    );
    expect(error).toMatchObject({ status: 400, code: "validation_error" });
    expect(error.details?.fields).toHaveLength(MAX_FIELD_PROBLEMS);
    expect((error.details!.fields as { field: string }[])[0]).toMatchObject({
      field: "tags.0",
      reason: "invalid_type",
    });
    expect(error.details?.omitted_fields).toBe(200_000 - MAX_FIELD_PROBLEMS);
    expect(JSON.stringify(error.details).length).toBeLessThan(4096);
  });

  it("lists fixed fields first, and every problem when there are at most 20", () => {
    const error = refusal(() => parseInput(schema, { id: "a", name: 1, tags: [1, 2] }, { id: "read_only" }));
    expect(error.details).toEqual({
      fields: [
        { field: "id", reason: "read_only", message: expect.any(String) },
        { field: "name", reason: "invalid_type", message: expect.any(String) },
        { field: "tags.0", reason: "invalid_type", message: expect.any(String) },
        { field: "tags.1", reason: "invalid_type", message: expect.any(String) },
      ],
    });
  });
});
