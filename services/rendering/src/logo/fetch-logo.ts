import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest, type RequestOptions } from "node:https";
import { isIP } from "node:net";
import { isPublicAddress, pinnedLookup, resolveAllowedHost, type ResolvedAddress } from "@qrplatform/platform";
import { MAX_LOGO_BYTES, readLogoDataUri, type LogoImage, type LogoProblem } from "../design/logo-data-uri.js";

export interface LogoFetchOptions {
  /** The budget for the whole fetch: every lookup, connection, redirect and the body. Default 5000. */
  timeoutMs?: number;
  /** Default MAX_LOGO_BYTES, which also stays the ceiling: a larger logo would not be a valid design logo. */
  maxBytes?: number;
  /** Default 3. */
  maxRedirects?: number;
  /** Default: the system resolver, asked for every address. */
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>;
  /** Default: isPublicAddress. */
  isAllowedAddress?: (address: string) => boolean;
}

/** Why a logo URL was refused: the data URI reasons, plus where the URL leads and whether it answered. */
export type LogoFetchProblem = {
  reason: LogoProblem["reason"] | "forbidden_address" | "logo_unreachable";
  description: string;
};

/**
 * Fetches a PNG or JPEG logo over http(s) without letting the URL reach into our own network: every
 * hop's host must resolve only to allowed addresses, and the connection goes to exactly those
 * addresses, so the name cannot be re-pointed between the check and the connection. Network trouble
 * is returned as a problem, never thrown.
 */
export async function fetchLogo(url: string, options: LogoFetchOptions = {}): Promise<LogoImage | LogoFetchProblem> {
  const limits: Limits = {
    deadline: AbortSignal.timeout(options.timeoutMs ?? 5000),
    maxBytes: options.maxBytes ?? MAX_LOGO_BYTES,
    lookup: options.lookup,
    isAllowedAddress: options.isAllowedAddress ?? isPublicAddress,
  };
  const maxRedirects = options.maxRedirects ?? 3;
  let next = url;
  for (let redirects = 0; ; redirects++) {
    const outcome = await fetchOnce(next, limits);
    if (!("redirectTo" in outcome)) return outcome;
    if (redirects === maxRedirects) return unreachable(`redirects more than ${maxRedirects} times`);
    next = outcome.redirectTo;
  }
}

interface Limits {
  deadline: AbortSignal;
  maxBytes: number;
  lookup: ((hostname: string) => Promise<ResolvedAddress[]>) | undefined;
  isAllowedAddress: (address: string) => boolean;
}

type Redirect = { redirectTo: string };

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const LOGO_CONTENT_TYPES = new Set(["image/png", "image/jpeg"]);

/** One request without following redirects: check the URL and where it leads, then read the answer. */
async function fetchOnce(href: string, limits: Limits): Promise<LogoImage | LogoFetchProblem | Redirect> {
  const url = parseLogoUrl(href);
  if ("reason" in url) return url;
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const addresses = await resolveAllowed(host, limits);
  if ("reason" in addresses) return addresses;

  let response: IncomingMessage;
  try {
    response = await send(url, host, addresses, limits.deadline);
  } catch {
    return networkProblem(limits.deadline, "could not be reached");
  }
  try {
    return await readResponse(url, response, limits);
  } finally {
    response.destroy();
  }
}

function parseLogoUrl(href: string): URL | LogoFetchProblem {
  if (!URL.canParse(href)) return invalid("is not a valid URL");
  const url = new URL(href);
  if (url.protocol !== "http:" && url.protocol !== "https:") return invalid("must be an http or https URL");
  if (url.username || url.password) return invalid("must not contain a user name or password");
  return url;
}

/** The addresses of a host, provided every one of them is allowed (the platform's shared rules). */
async function resolveAllowed(host: string, limits: Limits): Promise<ResolvedAddress[] | LogoFetchProblem> {
  const resolved = await resolveAllowedHost(host, limits);
  if (!("refused" in resolved)) return resolved;
  if (resolved.refused === "forbidden_address") {
    return { reason: "forbidden_address", description: "resolves to a private, loopback or link-local address" };
  }
  return networkProblem(limits.deadline, "has a host name that could not be resolved");
}

/** Sends the GET and waits for the response head, connecting only to the addresses already checked. */
function send(url: URL, host: string, addresses: ResolvedAddress[], deadline: AbortSignal): Promise<IncomingMessage> {
  const options: RequestOptions = {
    host,
    port: url.port,
    path: `${url.pathname}${url.search}`,
    headers: { accept: "image/png, image/jpeg", "user-agent": "qr-platform-logo-fetcher" },
    lookup: pinnedLookup(addresses),
    // A socket of our own for every request: a pooled one may be connected to another resolution.
    agent: false,
    signal: deadline,
    // The certificate is still checked against the host name, though we connect to an address.
    servername: isIP(host) === 0 ? host : undefined,
  };
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => request(options, resolve).on("error", reject).end());
}

async function readResponse(
  url: URL,
  response: IncomingMessage,
  limits: Limits,
): Promise<LogoImage | LogoFetchProblem | Redirect> {
  const status = response.statusCode ?? 0;
  if (REDIRECT_STATUSES.has(status)) {
    const location = response.headers.location;
    if (!location) return unreachable(`answered with a redirect (HTTP ${status}) but no location`);
    if (!URL.canParse(location, url.href)) return invalid("redirects to an invalid URL");
    return { redirectTo: new URL(location, url).href };
  }
  if (status < 200 || status > 299) return unreachable(`answered with HTTP ${status} instead of an image`);

  const mediaType = (response.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (!LOGO_CONTENT_TYPES.has(mediaType)) return invalid("must be a PNG (image/png) or JPEG (image/jpeg) image");
  if (Number(response.headers["content-length"]) > limits.maxBytes) return tooLarge(limits.maxBytes);

  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      length += chunk.length;
      if (length > limits.maxBytes) return tooLarge(limits.maxBytes);
      chunks.push(chunk);
    }
  } catch {
    return networkProblem(limits.deadline, "stopped sending the image part way");
  }
  // The bytes must really be of the declared type, which the data URI reader checks.
  return readLogoDataUri(`data:${mediaType};base64,${Buffer.concat(chunks).toString("base64")}`);
}

/** A failed lookup or connection; when the deadline has passed, that is the better explanation. */
function networkProblem(deadline: AbortSignal, description: string): LogoFetchProblem {
  return deadline.aborted ? unreachable("did not answer in time") : unreachable(description);
}

function unreachable(description: string): LogoFetchProblem {
  return { reason: "logo_unreachable", description };
}

function invalid(description: string): LogoFetchProblem {
  return { reason: "invalid_logo", description };
}

function tooLarge(maxBytes: number): LogoFetchProblem {
  const limit = maxBytes % 1024 === 0 ? `${maxBytes / 1024} KiB` : `${maxBytes} bytes`;
  return { reason: "too_large", description: `must be at most ${limit}` };
}
