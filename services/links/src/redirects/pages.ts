// The only pages the redirector ever shows. Each is a constant, so every miss gets the same bytes and
// a visitor learns nothing about why a link did not resolve, and no text of a caller's ever reaches
// one (a code's name, say), so there is nothing to escape. No script, no asset from anywhere: one
// style sheet inline, allowed by its hash in PAGE_SECURITY_POLICY.
import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";

const STYLE =
  "body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}" +
  "label,input,button{display:block;font:inherit;margin:.5rem 0}input{width:100%;box-sizing:border-box;padding:.4rem}" +
  "button{padding:.4rem 1rem}.problem{color:#a00}";

/**
 * The Content-Security-Policy of every page: nothing may load or run but the page's own style (by its
 * hash), forms post only back to the link, and no page may be framed or given another base URL.
 */
export const PAGE_SECURITY_POLICY =
  `default-src 'none'; style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'; ` +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const page = (title: string, body: string) =>
  Buffer.from(
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${title}</h1>
${body}
</body>
</html>
`,
  );

const textPage = (title: string, text: string) => page(title, `<p>${text}</p>`);

/** Unknown, deleted, foreign-host or malformed: one page for every kind of miss. */
export const NOT_FOUND_PAGE = textPage("Link not found", "This QR code or short link does not lead anywhere.");

/** An existing link whose owner paused it. */
export const PAUSED_PAGE = textPage(
  "This QR code is paused",
  "Its owner has paused this QR code. Please try again later.",
);

/** The platform could not look the link up. */
export const UNAVAILABLE_PAGE = textPage(
  "Temporarily unavailable",
  "This link cannot be opened right now. Please try again in a moment.",
);

/** A dynamic code before its `starts_at`, without an `expired_url` (404). */
export const NOT_LIVE_YET_PAGE = textPage(
  "This QR code is not active yet",
  "This QR code has not started yet. Please try again later.",
);

/** A dynamic code past its `expires_at` or its scan limit, without an `expired_url` (410). */
export const ENDED_PAGE = textPage("This QR code has ended", "This QR code is no longer active.");

// A plain form that posts back to the link itself (no action: the page's own URL, query string and
// all); the browser's own password field, so managers and screen readers know it.
const passwordForm = (problem: string) =>
  page(
    "This QR code is protected",
    `<p>Enter the password to continue.</p>
${problem && `<p class="problem" role="alert">${problem}</p>\n`}<form method="post">
<label for="password">Password</label>
<input id="password" name="password" type="password" required minlength="8" maxlength="128" autocomplete="current-password" autofocus>
<button type="submit">Continue</button>
</form>`,
  );

/** A protected code's form, asked for the first time. */
export const PASSWORD_PAGE = passwordForm("");

/** The form again after a wrong password. */
export const WRONG_PASSWORD_PAGE = passwordForm("That password is not right. Please try again.");

/** Too many wrong passwords from this address at this code (429). */
export const TOO_MANY_GUESSES_PAGE = textPage(
  "Too many attempts",
  "Too many wrong passwords were entered for this QR code. Please wait a while and try again.",
);

/** Answers with one of these pages: never cached, never framed, never sniffed, never telling where the visitor came from. */
export function sendPage(
  res: ServerResponse,
  status: number,
  body: Buffer,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    "Cache-Control": "no-store",
    "Content-Type": "text/html; charset=utf-8",
    "Content-Length": String(body.length),
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": PAGE_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    ...headers,
  });
  // For HEAD, Node sends the headers only.
  res.end(body);
}
