import { describe, expect, it } from "vitest";
import { isDatabaseUnavailable } from "@qrplatform/db";

const withCode = (code: string, message = "failed") => Object.assign(new Error(message), { code });

describe("isDatabaseUnavailable", () => {
  it.each([
    ["a refused connection", withCode("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432")],
    ["a reset socket", withCode("ECONNRESET", "read ECONNRESET")],
    ["a broken pipe", withCode("EPIPE")],
    ["a connect timeout of the socket", withCode("ETIMEDOUT")],
    ["an unreachable host", withCode("EHOSTUNREACH")],
    ["a host name that does not resolve yet", withCode("EAI_AGAIN")],
    [
      "a terminated backend (57P01, a restart)",
      withCode("57P01", "terminating connection due to administrator command"),
    ],
    ["a crash of another backend (57P02)", withCode("57P02")],
    ["a server starting up or shutting down (57P03)", withCode("57P03", "the database system is starting up")],
    ["no connection slots left (53300)", withCode("53300", "sorry, too many clients already")],
    ["a connection exception (class 08)", withCode("08006")],
    ["a protocol violation (class 08)", withCode("08P01")],
    ["a socket closed under the client", new Error("Connection terminated unexpectedly")],
    ["a connect that took too long", new Error("Connection terminated due to connection timeout")],
    ["no pooled connection in time", new Error("timeout exceeded when trying to connect")],
    ["a client that lost its connection", new Error("Client has encountered a connection error and is not queryable")],
    ["a refusal on every address of a host", new AggregateError([withCode("ECONNREFUSED"), withCode("ECONNREFUSED")])],
    ["an outage wrapped as a cause", new Error("could not store", { cause: withCode("57P01") })],
  ])("is true for %s", (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ["a unique violation", withCode("23505", "duplicate key value violates unique constraint")],
    ["a syntax error", withCode("42601")],
    ["a serialization failure", withCode("40001")],
    ["a statement cancelled on request", withCode("57014")],
    ["a plain error", new Error("boom")],
    ["a file that does not exist", withCode("ENOENT")],
    [
      "a message that merely mentions a timeout",
      new Error("timeout exceeded when trying to connect to the renderer, twice"),
    ],
    ["not an error", "ECONNREFUSED"],
    ["nothing", undefined],
  ])("is false for %s", (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it("ends on an error that is its own cause", () => {
    const error = new Error("loop") as Error & { cause?: unknown };
    error.cause = error;
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
