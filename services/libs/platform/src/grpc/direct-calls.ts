import type { DescMethod, DescService } from "@bufbuild/protobuf";
import {
  createContextValues,
  createHandlerContext,
  createMethodImplSpec,
  createServiceImplSpec,
  type ConnectRouter,
  type ContextValues,
  type Interceptor,
  type MethodImplSpec,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { invokeUnaryImplementation, runUnaryCall } from "@connectrpc/connect/protocol";

type UnaryCall = Transport["unary"];

/** The unary implementations a module's routes register, by "package.Service/Method". */
function unaryImplementations(routes: (router: ConnectRouter) => void): Map<string, MethodImplSpec> {
  const specs = new Map<string, MethodImplSpec>();
  const keep = (spec: MethodImplSpec) => {
    if (spec.kind === "unary") specs.set(methodKey(spec.method), spec);
  };
  // Only what routes call is recorded; streaming methods stay with the router transport.
  const recorder = {
    service(service: DescService, implementation: object) {
      for (const spec of Object.values(createServiceImplSpec(service, implementation as never).methods))
        keep(spec as MethodImplSpec);
      return recorder;
    },
    rpc(method: DescMethod, implementation: never) {
      keep(createMethodImplSpec(method, implementation) as MethodImplSpec);
      return recorder;
    },
  };
  routes(recorder as unknown as ConnectRouter);
  return specs;
}

const methodKey = (method: DescMethod) => `${method.parent.typeName}/${method.name}`;

/**
 * Unary calls made straight to the implementation, for a transport whose client and server share a
 * process. The client's interceptors and then the server's run exactly as over the network (the
 * credential is presented and checked, fields are checked, calls are traced, counted and logged, the
 * deadline and cancellation reach the handler), but nothing only a network needs is done: no binary
 * encoding and decoding of either message, no envelopes, no HTTP headers translated twice. Messages are
 * handed over, not copied: the caller gets the handler's answer object, the handler the caller's request.
 *
 * Answers undefined for a method that is not unary, or that the routes do not implement.
 */
export function directUnaryCalls(
  routes: (router: ConnectRouter) => void,
  serverInterceptors: readonly Interceptor[],
  clientInterceptors: readonly Interceptor[],
): (method: DescMethod) => UnaryCall | undefined {
  const specs = unaryImplementations(routes);
  const calls = new Map<string, UnaryCall | undefined>();
  return (method) => {
    const key = methodKey(method);
    if (!calls.has(key)) calls.set(key, directCall(specs.get(key), serverInterceptors, clientInterceptors));
    return calls.get(key);
  };
}

/** One method's direct call: the client's interceptors, then the server's, then the implementation. */
function directCall(
  spec: MethodImplSpec | undefined,
  serverInterceptors: readonly Interceptor[],
  clientInterceptors: readonly Interceptor[],
): UnaryCall | undefined {
  if (!spec) return undefined;
  const service = spec.method.parent;
  const url = `in-process:///${service.typeName}/${spec.method.name}`;
  const [clients, servers] = [[...clientInterceptors], [...serverInterceptors]];
  const call = (
    _method: DescMethod,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    header: ConstructorParameters<typeof Headers>[0],
    input: unknown,
    contextValues?: ContextValues,
  ) =>
    runUnaryCall({
      interceptors: clients,
      signal,
      timeoutMs,
      req: {
        stream: false,
        service,
        method: spec.method,
        requestMethod: "POST",
        url,
        header: new Headers(header),
        contextValues: contextValues ?? createContextValues(),
        message: input,
      } as unknown as Omit<UnaryRequest, "signal">,
      next: async (req: UnaryRequest): Promise<UnaryResponse> => {
        // The request's signal already carries the caller's deadline and cancellation.
        const context = createHandlerContext({
          service,
          method: spec.method,
          protocolName: "in-process",
          requestMethod: "POST",
          requestSignal: req.signal,
          requestHeader: req.header,
          url,
          contextValues: req.contextValues,
        });
        const message = await invokeUnaryImplementation(spec as never, context, req.message, servers);
        return {
          stream: false,
          service,
          method: spec.method,
          header: context.responseHeader,
          trailer: context.responseTrailer,
          message,
        } as UnaryResponse;
      },
    });
  return call as unknown as UnaryCall;
}
