// The only pages the redirector ever shows. Each is a constant, so every miss gets the same bytes and
// a visitor learns nothing about why a link did not resolve.

const page = (title: string, text: string) =>
  Buffer.from(
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}</style>
</head>
<body>
<h1>${title}</h1>
<p>${text}</p>
</body>
</html>
`,
  );

/** Unknown, deleted, foreign-host or malformed: one page for every kind of miss. */
export const NOT_FOUND_PAGE = page("Link not found", "This QR code or short link does not lead anywhere.");

/** An existing link whose owner paused it. */
export const PAUSED_PAGE = page("This QR code is paused", "Its owner has paused this QR code. Please try again later.");

/** The platform could not look the link up. */
export const UNAVAILABLE_PAGE = page(
  "Temporarily unavailable",
  "This link cannot be opened right now. Please try again in a moment.",
);
