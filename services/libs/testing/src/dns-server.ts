import { createSocket } from "node:dgram";
import type { AddressInfo } from "node:net";
import dns2 from "dns2";
import type { TxtRecordsLookup } from "@qrplatform/links";

const { Packet } = dns2;

/**
 * A real DNS server on 127.0.0.1 and a random UDP port, answering TXT questions from a table the test
 * edits: a name with records answers them, a name listed as existing without TXT answers NODATA, any
 * other name NXDOMAIN, and a name set to "silent" is never answered (a timeout).
 */
export class TestDnsServer {
  readonly txt = new Map<string, string[][] | "silent">();
  /** Names that exist but have no TXT record. */
  readonly existing = new Set<string>();
  readonly #server: dns2.UDPServer;
  #address = "";

  constructor() {
    this.#server = dns2.createUDPServer((request, send) => {
      const question = request.questions[0];
      const name = question?.name.toLowerCase() ?? "";
      const entry = this.txt.get(name);
      if (entry === "silent") return;
      const response = Packet.createResponseFromRequest(request);
      if (entry && question?.type === Packet.TYPE.TXT) {
        for (const chunks of entry) {
          response.answers.push({
            name: question.name,
            type: Packet.TYPE.TXT,
            class: Packet.CLASS.IN,
            ttl: 60,
            data: chunks,
          } as never);
        }
      } else if (!entry && !this.existing.has(name)) {
        response.header.rcode = 3; // NXDOMAIN
      }
      void send(response);
    });
  }

  /** The "host:port" to hand to the links service as its DNS resolver. */
  get address(): string {
    return this.#address;
  }

  async start(): Promise<this> {
    await this.#server.listen(0, "127.0.0.1");
    this.#address = `127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  /** Publishes a TXT record with one value (or several strings forming one value). */
  setTxt(name: string, ...values: string[]): void {
    this.txt.set(
      name.toLowerCase(),
      values.map((v) => [v]),
    );
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/**
 * TestDnsServer's table without the server: a `lookupTxt` for the links service that answers as a
 * resolver would (records; ENODATA for an existing name without TXT; ENOTFOUND; ETIMEOUT for "silent").
 * For tests whose subject is not the DNS code.
 */
export class MemoryDns {
  readonly txt = new Map<string, string[][] | "silent">();
  /** Names that exist but have no TXT record. */
  readonly existing = new Set<string>();

  readonly lookupTxt: TxtRecordsLookup = async (hostname) => {
    const name = hostname.toLowerCase();
    const entry = this.txt.get(name);
    if (entry === "silent") throw Object.assign(new Error(`queryTxt ETIMEOUT ${hostname}`), { code: "ETIMEOUT" });
    if (entry) return entry.map((chunks) => [...chunks]);
    const code = this.existing.has(name) ? "ENODATA" : "ENOTFOUND";
    throw Object.assign(new Error(`queryTxt ${code} ${hostname}`), { code });
  };

  /** Publishes a TXT record with one value (or several strings forming one value). */
  setTxt(name: string, ...values: string[]): void {
    this.txt.set(
      name.toLowerCase(),
      values.map((v) => [v]),
    );
  }

  async close(): Promise<void> {}
}

/** A UDP port on 127.0.0.1 that nothing listens on, for an unreachable resolver. */
export async function closedUdpPort(): Promise<number> {
  const socket = createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}
