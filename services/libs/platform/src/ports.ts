import type { Server } from "node:net";

/**
 * A process could not listen on one of its addresses: another process holds it (EADDRINUSE), or the
 * port needs privileges (EACCES). The message names the address and the variable that chooses it.
 * Processes report it in one line and exit with {@link STARTUP_FAILURE_EXIT_CODE} (see `startProcess`).
 */
export class PortInUseError extends Error {
  override name = "PortInUseError";
}

/** The exit status of a process that cannot start as configured: a bad variable or a busy port. */
export const STARTUP_FAILURE_EXIT_CODE = 2;

/**
 * Listens on host:port, turning the failures a configuration causes into a {@link PortInUseError}
 * naming `variable`. Other errors are passed on as they are.
 */
export async function listenOn(
  server: Server,
  options: { host: string; port: number; variable: string },
): Promise<void> {
  const { host, port, variable } = options;
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      server.off("listening", listening);
      if (error.code === "EADDRINUSE" || error.code === "EACCES") {
        const why = error.code === "EADDRINUSE" ? "is already in use" : "needs privileges this process does not have";
        reject(
          new PortInUseError(
            `Cannot listen on ${host}:${port} (${variable}): the address ${why}; set ${variable} to a free port.`,
            { cause: error },
          ),
        );
      } else reject(error);
    };
    const listening = () => {
      server.off("error", failed);
      resolve();
    };
    server.once("error", failed);
    server.once("listening", listening);
    server.listen(port, host);
  });
}
