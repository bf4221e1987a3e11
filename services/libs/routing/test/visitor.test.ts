// The visitor facts rules read, from what the redirect path has of a request.
import { describe, expect, it } from "vitest";
import { deviceOf, languageOf, osOf } from "@qrplatform/routing";

describe("languageOf", () => {
  it.each([
    ["ja", "ja"],
    ["ja-JP,en;q=0.8", "ja"],
    ["en-US;q=0.5, de-DE", "de"],
    ["fr;q=0.7, en;q=0.7", "fr"],
    ["*, de;q=0.5", "de"],
    ["de;q=0, en;q=0.1", "en"],
    ["zh-Hant-TW", "zh"],
    ["EN-gb", "en"],
    ["en;q=2, de;q=0.1", "de"],
    ["en;q=1.000", "en"],
    ["en;q=abc, de;q=0.2", "de"],
    ["", ""],
    [",,,", ""],
    ["*", ""],
    ["x-pig-latin;q=0.1", "x"],
    ["ja\u0000", ""],
  ])("reads %j as %j", (header, language) => {
    expect(languageOf(header)).toBe(language);
  });

  it("reads nothing from a missing or repeated header", () => {
    expect(languageOf(undefined)).toBe("");
    expect(languageOf(["en", "de"])).toBe("");
  });

  it("reads only the first 32 entries of a long header", () => {
    const header = `${Array.from({ length: 40 }, () => "xx;q=0").join(",")},de`;
    expect(languageOf(header)).toBe("");
    expect(languageOf(`${Array.from({ length: 31 }, () => "xx;q=0").join(",")},de`)).toBe("de");
  });
});

describe("osOf and deviceOf", () => {
  it.each([
    ["iOS", "ios"],
    ["Android", "android"],
    ["Windows", "windows"],
    ["macOS", "macos"],
    ["Linux", "linux"],
    ["Chromium OS", "other"],
    ["", "other"],
  ])("names the family %j %j", (family, os) => {
    expect(osOf(family)).toBe(os);
  });

  it("names the devices rules can name", () => {
    expect(["mobile", "tablet", "desktop", "other", ""].map(deviceOf)).toEqual(["mobile", "tablet", "desktop", "", ""]);
  });
});
