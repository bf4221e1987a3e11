import type { RequestListener } from "node:http";

/**
 * A request listener whose real handler is set later. A server can then listen first (so its actual
 * port is known, even when asked for port 0) and build what depends on that address afterwards;
 * requests that arrive before the handler is set get `starting`'s answer, by default a 503.
 */
export function lateHandler(starting: RequestListener = startingUp): {
  listener: RequestListener;
  set(handler: RequestListener): void;
} {
  let current: RequestListener | undefined;
  return {
    listener: (req, res) => (current ?? starting)(req, res),
    set: (handler) => {
      current = handler;
    },
  };
}

const startingUp: RequestListener = (_req, res) => {
  res.writeHead(503, { "content-type": "text/plain; charset=utf-8", "retry-after": "1" });
  res.end("Starting up; retry in a moment.\n");
};
