// A redirect whose request the redirect path already classified (a link with routing) is recorded with
// that classification, on either thread, and the request is not classified a second time.
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import type { Scan } from "@qrplatform/api/links";
import { VISITOR_KEY_SECRET } from "@qrplatform/testing";
import { captureRedirect, capturedRedirects, emptyCapture } from "../src/scans/recording/capture.js";
import type { ClassifiedRequest, ScanFacts } from "../src/scans/recording/classify.js";
import { ScanRecorder } from "../src/scans/recording/scan-recorder.js";
import { scansOf } from "../src/scans/scan-columns.js";
import { logger } from "./support/links-stack.js";

const target = {
  linkId: "6f1c2a4e-8a53-4a4e-9d0e-2b1f3c4d5e6f",
  accountId: "0a0b0c0d-0000-4000-8000-000000000001",
  location: "https://example.com/",
  paused: false,
};
const req = {
  method: "GET",
  headers: { "user-agent": "curl/8.0" },
  socket: { remoteAddress: "203.0.113.9" },
} as unknown as IncomingMessage;
const facts: ScanFacts = {
  clientAddress: "198.51.100.7",
  country: "JP",
  deviceType: "mobile",
  os: "iOS",
  browser: "Mobile Safari",
  referrerHost: "",
  automated: false,
  userAgent: "an iPhone",
};

describe("a classification made while answering", () => {
  it("is what the recorder stores, without classifying again", async () => {
    const classified: ClassifiedRequest[] = [];
    const stored: Scan[] = [];
    const recorder = new ScanRecorder({
      send: async (scans) => {
        stored.push(...scansOf(scans));
      },
      classify: (request) => {
        classified.push(request);
        return { ...facts, country: "DE", automated: false };
      },
      visitorKeySecret: VISITOR_KEY_SECRET,
      logger,
      flushIntervalMs: 10,
    });
    recorder.recordRedirect(req, target, facts);
    recorder.recordRedirect(req, target);
    await recorder.close();
    expect(stored.map((scan) => scan.country).sort()).toEqual(["DE", "JP"]);
    expect(classified).toHaveLength(1);
  });

  it("crosses to the recording thread with the captured redirect", () => {
    const capture = emptyCapture();
    captureRedirect(capture, req, target.linkId, 1000, undefined, facts);
    captureRedirect(capture, req, target.linkId, 2000, undefined);
    const [first, second] = [...capturedRedirects(structuredClone(capture), undefined)];
    expect(first!.facts).toEqual(facts);
    expect(second!.facts).toBeUndefined();
    expect(second!.request).toEqual({ socket: { remoteAddress: "203.0.113.9" }, headers: req.headers });
  });

  it("crosses with the rule and variant that decided each redirect", () => {
    const capture = emptyCapture();
    const ruleId = "00000000-0000-4000-8000-000000000001";
    captureRedirect(capture, req, target.linkId, 1000, undefined, facts, { ruleId, variant: 2 });
    captureRedirect(capture, req, target.linkId, 2000, undefined, facts, { ruleId });
    captureRedirect(capture, req, target.linkId, 3000, undefined);
    captureRedirect(capture, req, target.linkId, 4000, undefined, { ...facts, country: "KR" });
    const redirects = [...capturedRedirects(structuredClone(capture), undefined)];
    expect(redirects.map((redirect) => redirect.route)).toEqual([
      { ruleId, variant: 2 },
      { ruleId },
      undefined,
      undefined,
    ]);
    expect(redirects.map((redirect) => redirect.facts?.country)).toEqual(["JP", "JP", undefined, "KR"]);
  });
});
