import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { RecordScansRequestSchema, ScanSchema, type Scan } from "@qrplatform/api/links";
import { scanClassifier, visitorKey } from "../src/scans/recording/classify.js";
import { scansOf, type ScanColumns } from "../src/scans/scan-columns.js";
import { timeOrderedScanId } from "../src/scans/recording/scan-id.js";
import { ScanRecorder, type SendScans } from "../src/scans/recording/scan-recorder.js";
import { ScanSpool } from "../src/scans/recording/scan-spool.js";
import { createLogger, isUuid, Metrics } from "@qrplatform/platform";
import type { RedirectTarget } from "../src/server.js";
import { logger } from "./support/links-stack.js";
import { VISITOR_KEY_SECRET } from "@qrplatform/testing";

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
const target: RedirectTarget = {
  linkId: "6f1c2a4e-8a53-4a4e-9d0e-2b1f3c4d5e6f",
  accountId: "0a0b0c0d-0000-4000-8000-000000000001",
  location: "https://example.com/",
  paused: false,
};

const request = (method: string, userAgent: string, address = "203.0.113.9") =>
  ({
    method,
    headers: { "user-agent": userAgent, referer: "https://news.example/story" },
    socket: { remoteAddress: address },
  }) as unknown as IncomingMessage;

/** A RecordScans stand-in that stores by id, as the service does, and can be told to fail. */
function fakeService() {
  const stored = new Map<string, Scan>();
  const failures: Error[] = [];
  let calls = 0;
  const send: SendScans = async (scans) => {
    calls++;
    const failure = failures.shift();
    if (failure) throw failure;
    for (const scan of scansOf(scans)) stored.set(scan.id, scan);
  };
  return { stored, failures, send, calls: () => calls };
}

const recorderFor = (send: SendScans, flushIntervalMs = 10, spool?: ScanSpool) =>
  new ScanRecorder({
    send,
    spool,
    classify: scanClassifier({ trustedProxies: [], countryOf: () => "" }),
    visitorKeySecret: VISITOR_KEY_SECRET,
    logger,
    flushIntervalMs,
  });

/** The batch files a spool holds, as this version writes them. */
const spooledFiles = (dir: string) => readdirSync(dir).filter((name) => name.endsWith(".json"));

const until = async (condition: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe("the scan recorder", () => {
  it("counts GETs by people, not HEADs, bots or link previews", async () => {
    const service = fakeService();
    const recorder = recorderFor(service.send);
    recorder.recordRedirect(request("GET", IPHONE), target);
    recorder.recordRedirect(request("HEAD", IPHONE), target);
    recorder.recordRedirect(request("GET", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"), target);
    recorder.recordRedirect(
      request("GET", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"),
      target,
    );
    recorder.recordRedirect(request("GET", "Googlebot/2.1 (+http://www.google.com/bot.html)"), target);
    recorder.recordRedirect(request("GET", ""), target);
    await recorder.close();
    const scans = [...service.stored.values()];
    expect(scans).toHaveLength(1);
    expect(scans[0]).toMatchObject({
      linkId: target.linkId,
      deviceType: "mobile",
      os: "iOS",
      referrerHost: "news.example",
    });
    // The salted hash of the address and agent, never the address itself.
    expect(scans[0]!.visitorKey).toBe(
      visitorKey(VISITOR_KEY_SECRET, target.linkId, { clientAddress: "203.0.113.9", userAgent: IPHONE }),
    );
  });

  it("keeps a batch until it is stored, so a failing service loses nothing and counts nothing twice", async () => {
    const service = fakeService();
    service.failures.push(
      new ConnectError("down", Code.Unavailable),
      new Error("connection reset"),
      new ConnectError("down", Code.Unavailable),
    );
    const recorder = recorderFor(service.send);
    for (let i = 0; i < 30; i++) recorder.recordRedirect(request("GET", IPHONE, `198.51.100.${i}`), target);
    await until(() => service.stored.size === 30);
    expect(service.calls()).toBeGreaterThanOrEqual(4);
    expect(recorder.pending).toBe(0);
    await recorder.close();
  });

  it("sends what is left when it closes", async () => {
    const service = fakeService();
    const recorder = recorderFor(service.send, 60_000);
    for (let i = 0; i < 5; i++) recorder.recordRedirect(request("GET", IPHONE), target);
    expect(service.stored.size).toBe(0);
    await recorder.close();
    expect(service.stored.size).toBe(5);
  });

  it("sends a full batch at once, without waiting for the interval", async () => {
    const service = fakeService();
    const recorder = recorderFor(service.send, 60_000);
    for (let i = 0; i < 1000; i++) recorder.recordRedirect(request("GET", IPHONE), target);
    await until(() => service.stored.size === 1000);
    await recorder.close();
  });

  it("catches up on a backlog in calls of up to 5,000 scans, the most RecordScans takes", async () => {
    const sizes: number[] = [];
    const service = fakeService();
    const recorder = recorderFor(async (scans) => {
      sizes.push(scans.id.length);
      await service.send(scans);
    }, 60_000);
    for (let i = 0; i < 12_000; i++) recorder.recordRedirect(request("GET", IPHONE, `198.51.100.${i % 250}`), target);
    await until(() => service.stored.size === 12_000);
    expect(sizes).toEqual([5000, 5000, 2000]);
    await recorder.close();
  });

  it("drops a batch the service refuses as invalid instead of blocking every later scan", async () => {
    const service = fakeService();
    service.failures.push(new ConnectError("bad", Code.InvalidArgument));
    const recorder = recorderFor(service.send);
    recorder.recordRedirect(request("GET", IPHONE), target);
    await until(() => service.calls() === 1);
    recorder.recordRedirect(request("GET", IPHONE), target);
    await recorder.close();
    expect(service.stored.size).toBe(1);
  });

  describe("with a spool on disk", () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), "qrp-spool-"));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));
    const down: SendScans = () => Promise.reject(new ConnectError("down", Code.Unavailable));

    it("moves scans to disk while the service is down, and a later run stores each of them once", async () => {
      const crashed = recorderFor(down, 10, new ScanSpool(dir));
      for (let i = 0; i < 30; i++) crashed.recordRedirect(request("GET", IPHONE, `198.51.100.${i}`), target);
      await until(() => crashed.pending === 0);
      expect(spooledFiles(dir).length).toBeGreaterThan(0);

      // What a hard kill leaves behind is replayed by the next process on the same spool.
      const service = fakeService();
      const restarted = recorderFor(service.send, 10, new ScanSpool(dir));
      await until(() => service.stored.size === 30);
      await restarted.close();
      expect(spooledFiles(dir)).toEqual([]);
      expect(new Set([...service.stored.values()].map((scan) => scan.id)).size).toBe(30);
      await crashed.close(0);
    });

    it("keeps the rule and the variant that decided each scan, also through the spool", async () => {
      const [rule, split] = [crypto.randomUUID(), crypto.randomUUID()];
      const crashed = recorderFor(down, 10, new ScanSpool(dir));
      crashed.recordRedirect(request("GET", IPHONE, "198.51.100.1"), target, undefined, { ruleId: rule });
      crashed.recordRedirect(request("GET", IPHONE, "198.51.100.2"), target, undefined, { ruleId: split, variant: 2 });
      crashed.recordRedirect(request("GET", IPHONE, "198.51.100.3"), target);
      await until(() => crashed.pending === 0);
      await crashed.close(0);
      const service = fakeService();
      const restarted = recorderFor(service.send, 10, new ScanSpool(dir));
      await until(() => service.stored.size === 3);
      await restarted.close();
      expect([...service.stored.values()].map((scan) => [scan.ruleId, scan.variant]).sort()).toEqual(
        [
          ["", undefined],
          [rule, undefined],
          [split, 2],
        ].sort(),
      );
    });

    // This version's batch file of one scan, whole, to damage.
    const columns = {
      id: [crypto.randomUUID()],
      linkId: [target.linkId],
      scannedAtMs: [Date.now()],
      country: [""],
      deviceType: ["mobile"],
      os: [""],
      browser: [""],
      referrerHost: [""],
      visitorKey: ["v"],
    };
    const { visitorKey: _, ...withoutVisitorKeys } = columns;
    it.each([
      ["an earlier version's, not a RecordScansRequest", ".scans", Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f])],
      ["JSON cut short", ".json", Buffer.from(JSON.stringify(columns).slice(0, 40))],
      ["a column missing", ".json", Buffer.from(JSON.stringify(withoutVisitorKeys))],
      ["columns of other lengths", ".json", Buffer.from(JSON.stringify({ ...columns, linkId: [] }))],
      ["a time as text", ".json", Buffer.from(JSON.stringify({ ...columns, scannedAtMs: ["1"] }))],
      ["a variant as text", ".json", Buffer.from(JSON.stringify({ ...columns, ruleId: [""], variant: ["1"] }))],
    ])(
      "renames a spool file that cannot be decoded (%s) out of the way and stores the batches after it",
      async (_, suffix, bytes) => {
        // Named as the spool names its batches, oldest first.
        writeFileSync(join(dir, `000000000000001-damaged${suffix}`), bytes);
        const crashed = recorderFor(down, 60_000, new ScanSpool(dir));
        crashed.recordRedirect(request("GET", IPHONE), target);
        await crashed.close(50);
        expect(spooledFiles(dir).filter((file) => !file.startsWith("000000000000001-damaged"))).toHaveLength(1);
        const service = fakeService();
        const restarted = recorderFor(service.send, 10, new ScanSpool(dir));
        await until(() => service.stored.size === 1);
        await restarted.close();
        expect(readdirSync(dir)).toEqual(["000000000000001-damaged.unreadable"]);
      },
    );

    it("stores, oldest first, the batches an earlier version spooled as RecordScans requests in protobuf binary", async () => {
      const older = Date.now() - 60_000;
      const scans = [older, older + 1].map((at) =>
        create(ScanSchema, {
          id: timeOrderedScanId(at),
          linkId: target.linkId,
          scanTime: timestampFromMs(at),
          deviceType: "mobile",
          visitorKey: "v",
        }),
      );
      writeFileSync(
        join(dir, `${String(older).padStart(15, "0")}-earlier.scans`),
        toBinary(RecordScansRequestSchema, create(RecordScansRequestSchema, { scans })),
      );
      // This version's batch, newer.
      const crashed = recorderFor(down, 60_000, new ScanSpool(dir));
      crashed.recordRedirect(request("GET", IPHONE), target);
      await crashed.close(50);

      const order: number[] = [];
      const service = fakeService();
      const inOrder: SendScans = async (batch) => {
        order.push(...batch.scannedAtMs);
        await service.send(batch);
      };
      const restarted = recorderFor(inOrder, 10, new ScanSpool(dir));
      await until(() => service.stored.size === 3);
      await restarted.close();
      expect(order.slice(0, 2)).toEqual([older, older + 1]);
      expect(order[2]).toBeGreaterThan(older + 1);
      expect(readdirSync(dir)).toEqual([]);
    });

    it("checks a spooled batch as it reads it back: one that breaks the scan rules is dropped and counted, the batches after it are stored", async () => {
      const spool = new ScanSpool(dir);
      const scan = (deviceType: string) => ({
        id: [timeOrderedScanId(Date.now())],
        linkId: [target.linkId],
        scannedAtMs: [Date.now()],
        country: [""],
        deviceType: [deviceType],
        os: ["iOS"],
        browser: ["Mobile Safari"],
        referrerHost: [""],
        visitorKey: ["visitor"],
      });
      // As an older version (or a hand on the disk) might have left them, without the routing
      // decision's columns: oldest first.
      await spool.write(scan("toaster") as ScanColumns);
      await new Promise((resolve) => setTimeout(resolve, 2));
      await spool.write(scan("mobile") as ScanColumns);
      const service = fakeService();
      const recorder = recorderFor(service.send, 10, new ScanSpool(dir));
      await until(() => service.stored.size === 1);
      await recorder.close();
      expect([...service.stored.values()].map((stored) => stored.deviceType)).toEqual(["mobile"]);
      expect(recorder.counts.dropped.refused).toBe(1);
      expect(spooledFiles(dir)).toEqual([]);
    });

    // Whatever RecordScans fails with, the scans wait on disk; a commit whose answer never came back
    // (the connection reset after COMMIT) is sent again with the same scan ids, which the service skips.
    it.each([
      ["UNAVAILABLE", false, () => new ConnectError("database", Code.Unavailable)],
      ["INTERNAL", false, () => new ConnectError("boom", Code.Internal)],
      ["a reset connection", false, () => Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })],
      [
        "a commit whose answer was lost",
        true,
        () => new ConnectError("connection reset after commit", Code.Unavailable),
      ],
    ])("spools while sends fail with %s, then stores each scan once", async (_, committed, failure) => {
      const stored = new Map<string, number>();
      let outage = true;
      const send: SendScans = async (scans) => {
        if (outage && !committed) throw failure();
        for (const id of scans.id) stored.set(id, (stored.get(id) ?? 0) + 1);
        if (outage) throw failure();
      };
      const recorder = recorderFor(send, 10, new ScanSpool(dir));
      for (let i = 0; i < 30; i++) recorder.recordRedirect(request("GET", IPHONE, `198.51.100.${i}`), target);
      await until(() => recorder.pending === 0 && spooledFiles(dir).length > 0);
      outage = false;
      await recorder.close();
      expect(spooledFiles(dir)).toEqual([]);
      // Every scan arrived; retries carried the same ids (a service that stores by id counts each once).
      expect(stored.size).toBe(30);
      if (!committed) expect(new Set(stored.values())).toEqual(new Set([1]));
    });

    it("spools what it could not send when it closes, instead of losing it", async () => {
      const recorder = recorderFor(down, 60_000, new ScanSpool(dir));
      for (let i = 0; i < 5; i++) recorder.recordRedirect(request("GET", IPHONE), target);
      await recorder.close(50);
      expect(recorder.pending).toBe(0);
      const service = fakeService();
      await recorderFor(service.send, 10, new ScanSpool(dir)).close();
      expect(service.stored.size).toBe(5);
    });

    it("spools what it had no time left to send when it closes, though no send had failed", async () => {
      const service = fakeService();
      const recorder = recorderFor(service.send, 60_000, new ScanSpool(dir));
      for (let i = 0; i < 5; i++) recorder.recordRedirect(request("GET", IPHONE), target);
      await recorder.close(0);
      expect([service.calls(), recorder.pending, recorder.spooledScans]).toEqual([0, 0, 5]);
      await recorderFor(service.send, 10, new ScanSpool(dir)).close();
      expect(service.stored.size).toBe(5);
    });

    it("moves a backlog to disk when storing falls behind, so a hard kill then loses none of it", async () => {
      // A database at its limit: the first batch takes a while, and after it nothing is stored any more.
      let release!: () => void;
      const slowFirst = new Promise<void>((resolve) => (release = resolve));
      const first = fakeService();
      let calls = 0;
      const slow: SendScans = async (scans) => {
        if (++calls > 1) return new Promise<never>(() => {});
        await slowFirst;
        await first.send(scans);
      };
      const behind = recorderFor(slow, 10, new ScanSpool(dir));
      for (let i = 0; i < 60_000; i++)
        behind.recordRedirect(request("GET", IPHONE, `198.51.${i >> 8}.${i & 255}`), target);
      await until(() => calls === 1);
      release();

      // The first batch (5,000, the most a call takes) is stored; the 55,000 behind it wait on disk, not in memory.
      await until(() => behind.spooledScans === 55_000);
      expect(behind.pending).toBe(0);
      expect(first.stored.size).toBe(5000);
      expect(behind.counts.dropped.buffer_full).toBe(0);

      // The process is killed while its next call hangs: the next one on the same spool stores the rest, each scan once.
      const service = fakeService();
      const restarted = recorderFor(service.send, 10, new ScanSpool(dir));
      await until(() => service.stored.size === 55_000);
      await restarted.close();
      expect(new Set([...first.stored.keys(), ...service.stored.keys()]).size).toBe(60_000);
      expect(spooledFiles(dir)).toEqual([]);
    });

    it("keeps a backlog in memory, and stores it all, when storing catches up soon enough", async () => {
      const service = fakeService();
      const recorder = recorderFor(service.send, 10, new ScanSpool(dir));
      for (let i = 0; i < 55_000; i++)
        recorder.recordRedirect(request("GET", IPHONE, `198.51.${i >> 8}.${i & 255}`), target);
      await until(() => service.stored.size === 55_000);
      await recorder.close();
      // 50,000 waiting behind the first batch is not yet behind for good: no file was written.
      expect(readdirSync(dir)).toEqual([]);
    });

    it("stores scans while the disk will not even list the spool", async () => {
      writeFileSync(join(dir, "a-file"), "");
      const service = fakeService();
      const recorder = recorderFor(service.send, 10, new ScanSpool(join(dir, "a-file", "spool")));
      for (let i = 0; i < 3; i++) recorder.recordRedirect(request("GET", IPHONE), target);
      await until(() => service.stored.size === 3);
      await recorder.close();
    });

    it("says once that the disk refuses the spool, however many rounds fail, and once that it takes it again", async () => {
      // The spool's folder would be under a file: every write fails until the file is gone.
      const blocker = join(dir, "a-file");
      writeFileSync(blocker, "");
      const messages: string[] = [];
      let sends = 0;
      const recorder = new ScanRecorder({
        send: (scans) => {
          sends++;
          return down(scans);
        },
        spool: new ScanSpool(join(blocker, "spool")),
        classify: scanClassifier({ trustedProxies: [], countryOf: () => "" }),
        visitorKeySecret: VISITOR_KEY_SECRET,
        logger: createLogger({
          service: "test",
          destination: { write: (line: string) => messages.push((JSON.parse(line) as { msg: string }).msg) },
        }),
        flushIntervalMs: 10,
      });
      for (let i = 0; i < 3; i++) recorder.recordRedirect(request("GET", IPHONE), target);
      await until(() => sends >= 4);
      expect(
        messages.filter(
          (message) => message === "the scan spool's disk fails; scans wait in memory until it works again",
        ),
      ).toHaveLength(1);
      expect([recorder.pending, recorder.spooledScans]).toEqual([3, 0]);

      rmSync(blocker);
      await until(() => recorder.spooledScans === 3);
      expect(messages.filter((message) => message === "the scan spool's disk works again")).toHaveLength(1);
      await recorder.close(0);
    });

    it("reports scans buffered, spooled and stored, and the age of the oldest one not stored", async () => {
      let up = false;
      const stored: Scan[] = [];
      const send: SendScans = async (scans) => {
        if (!up) throw new ConnectError("database away", Code.Unavailable);
        stored.push(...scansOf(scans));
      };
      let clock = Date.parse("2026-03-01T12:00:00Z");
      const metrics = new Metrics();
      const recorder = new ScanRecorder({
        send,
        spool: new ScanSpool(dir),
        classify: scanClassifier({ trustedProxies: [], countryOf: () => "" }),
        visitorKeySecret: VISITOR_KEY_SECRET,
        logger,
        flushIntervalMs: 10,
        now: () => new Date(clock),
        metrics,
      });
      const value = async (name: string) => (await metrics.registry.getSingleMetric(name)!.get()).values[0]?.value ?? 0;
      for (let i = 0; i < 3; i++) recorder.recordRedirect(request("GET", IPHONE), target);
      expect(await value("qrp_scans_buffered")).toBe(3);

      // The database is away: the scans move to the spool, and the oldest grows older.
      await until(() => recorder.pending === 0 && spooledFiles(dir).length > 0);
      clock += 120_000;
      expect([
        await value("qrp_scans_buffered"),
        await value("qrp_scans_spooled"),
        await value("qrp_scans_stored_total"),
      ]).toEqual([0, 3, 0]);
      expect(await value("qrp_scan_oldest_unstored_age_seconds")).toBe(120);

      up = true;
      await until(() => stored.length === 3, 10_000);
      await recorder.close();
      expect([await value("qrp_scans_spooled"), await value("qrp_scans_stored_total")]).toEqual([0, 3]);
      expect(await value("qrp_scan_oldest_unstored_age_seconds")).toBe(0);
    });
  });

  // A redirect keeps its request's address and headers until the next turn of the event loop
  // classifies them, a chunk at a time.
  describe("classifying", () => {
    it("classifies a redirect in the turn after it was answered, without waiting for the flush", async () => {
      const service = fakeService();
      const recorder = recorderFor(service.send, 60_000);
      for (let i = 0; i < 3; i++) recorder.recordRedirect(request("GET", IPHONE), target);
      expect(recorder.recorded).toBe(0);
      await new Promise((resolve) => setImmediate(resolve));
      // Classified (each a scan with its id), not sent: the flush is a minute away.
      expect([recorder.recorded, recorder.pending, service.calls()]).toEqual([3, 3, 0]);
      await recorder.close();
      expect(service.stored.size).toBe(3);
    });

    it("gives each scan the time it was answered and the address its socket had then", async () => {
      const service = fakeService();
      const answeredAt = Date.parse("2026-03-01T12:00:00Z");
      let clock = answeredAt;
      const recorder = new ScanRecorder({
        send: service.send,
        classify: scanClassifier({
          trustedProxies: [],
          countryOf: (address) => (address === "81.169.145.1" ? "DE" : ""),
        }),
        visitorKeySecret: VISITOR_KEY_SECRET,
        logger,
        flushIntervalMs: 60_000,
        now: () => new Date(clock),
      });
      const req = request("GET", IPHONE, "81.169.145.1");
      recorder.recordRedirect(req, target);
      // The socket is gone and time has passed by the time the scan is classified.
      (req.socket as { remoteAddress?: string }).remoteAddress = undefined;
      clock += 5000;
      await recorder.close();
      const [scan] = [...service.stored.values()];
      expect(timestampMs(scan!.scanTime!)).toBe(answeredAt);
      expect(scan).toMatchObject({
        country: "DE",
        visitorKey: visitorKey(VISITOR_KEY_SECRET, target.linkId, { clientAddress: "81.169.145.1", userAgent: IPHONE }),
      });
    });

    it("drops and counts a redirect the classifier fails on, and stores the others", async () => {
      const service = fakeService();
      const metrics = new Metrics();
      const classify = scanClassifier({ trustedProxies: [], countryOf: () => "" });
      const recorder = new ScanRecorder({
        send: service.send,
        classify: (req) => {
          if (req.headers["user-agent"] === "unreadable") throw new Error("cannot classify");
          return classify(req);
        },
        visitorKeySecret: VISITOR_KEY_SECRET,
        logger,
        flushIntervalMs: 10,
        metrics,
      });
      for (const userAgent of [IPHONE, "unreadable", IPHONE])
        recorder.recordRedirect(request("GET", userAgent), target);
      await recorder.close();
      expect(service.stored.size).toBe(2);
      expect(recorder.recorded).toBe(2);
      const dropped = (await metrics.registry.getSingleMetric("qrp_scans_dropped_total")!.get()).values;
      expect(dropped.find((sample) => sample.labels.reason === "unclassifiable")?.value).toBe(1);
    });

    it("keeps up with redirects answered between its chunks, and stores each one once", async () => {
      const service = fakeService();
      const recorder = recorderFor(service.send, 10);
      for (let i = 0; i < 5000; i++)
        recorder.recordRedirect(request("GET", IPHONE, `198.51.${i >> 8}.${i & 255}`), target);
      // More redirects are answered at every turn of the event loop while the first 5,000 are classified.
      let answered = 5000;
      const more = setInterval(() => {
        for (let i = 0; i < 50; i++, answered++) recorder.recordRedirect(request("GET", IPHONE), target);
      }, 0);
      await until(() => service.stored.size >= 5000);
      clearInterval(more);
      await recorder.close();
      expect(recorder.pending).toBe(0);
      expect(recorder.recorded).toBe(answered);
      expect(service.stored.size).toBe(answered);
    });
  });
});

describe("scan ids", () => {
  it("are UUIDs version 7 that sort in the order of their times, so stored scans append to the key", () => {
    const times = [0, 1, 1_700_000_000_000, 1_700_000_000_001, Date.parse("2026-11-23T22:30:00Z"), 2 ** 48 - 1];
    const ids = times.map((time) => timeOrderedScanId(time));
    for (const [i, id] of ids.entries()) {
      expect(isUuid(id)).toBe(true);
      expect(id[14]).toBe("7");
      expect("89ab").toContain(id[19]);
      expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(times[i]);
    }
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(Array.from({ length: 1000 }, () => timeOrderedScanId(1_700_000_000_000))).size).toBe(1000);
  });
});
