import { Code, ConnectError, type StreamResponse, type UnaryResponse } from "@connectrpc/connect";

/**
 * What an interceptor does at the end of a call. A unary call ends when its response arrives; a
 * streamed response is returned as soon as the call starts, and ends when its last message has been
 * read, reading it fails, or its reader stops early: interceptors that log, count, trace or translate
 * errors must see that end, not the start.
 */
export interface CallOutcome {
  /** Replaces an error before the caller sees it (and before `settled`); errors pass unchanged without it. */
  mapError?(error: unknown): unknown;
  /**
   * Called exactly once, when the call is over: with the error the caller sees, or undefined when it
   * succeeded. A stream that ends without an error after its signal was aborted (the caller cancelled,
   * or the server is shutting down) settles with a CANCELED error.
   */
  settled(error: unknown): void;
  /**
   * Runs each step of the call (the call itself, then every read of a streamed message) in a context
   * of the interceptor's choosing, such as tracing's active span, so the work a step does belongs to
   * it. Steps run as they are when omitted.
   */
  run?<T>(step: () => T): T;
}

/**
 * Makes a call through `next` and reports its end to `outcome`, for unary and streamed responses
 * alike. `signal` is the call's AbortSignal (`req.signal`).
 */
export async function observeCall<R extends UnaryResponse | StreamResponse>(
  call: () => Promise<R>,
  signal: AbortSignal,
  outcome: CallOutcome,
): Promise<R> {
  const run = outcome.run ?? (<T>(step: () => T) => step());
  const fail = (error: unknown): unknown => {
    const seen = outcome.mapError ? outcome.mapError(error) : error;
    outcome.settled(seen);
    return seen;
  };
  let res: R;
  try {
    res = await run(call);
  } catch (error) {
    throw fail(error);
  }
  if (!res.stream) {
    outcome.settled(undefined);
    return res;
  }
  const ended = () =>
    outcome.settled(signal.aborted ? new ConnectError("The call was canceled.", Code.Canceled) : undefined);
  return { ...res, message: observeMessages(res.message, run, fail, ended) };
}

/** The messages of a stream, each read through `run`; `fail` and `ended` are told how the stream ended. */
async function* observeMessages<T>(
  messages: AsyncIterable<T>,
  run: <S>(step: () => S) => S,
  fail: (error: unknown) => unknown,
  ended: () => void,
): AsyncGenerator<T> {
  const iterator = messages[Symbol.asyncIterator]();
  let over = false;
  try {
    for (;;) {
      let result: IteratorResult<T>;
      try {
        result = await run(() => iterator.next());
      } catch (error) {
        over = true;
        throw fail(error);
      }
      if (result.done) {
        over = true;
        ended();
        return;
      }
      yield result.value;
    }
  } finally {
    // The reader stopped early (a cancelled call, a client gone away): the stream ends here, and the
    // source is told, so a handler's own clean-up runs.
    if (!over) {
      ended();
      await run(() => iterator.return?.());
    }
  }
}
