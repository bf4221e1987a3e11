import { createRegistry, toBinary, type DescFile, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  ServerReflection,
  type ServerReflectionRequest,
  type ServerReflectionResponseSchema,
} from "@qrplatform/api/grpc-reflection";

type ReflectionAnswer = MessageInitShape<typeof ServerReflectionResponseSchema>["messageResponse"];

/** The given files and every file they import, transitively, by file name. */
function withImports(roots: readonly DescFile[]): Map<string, DescFile> {
  const files = new Map<string, DescFile>();
  const visit = (file: DescFile) => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    file.dependencies.forEach(visit);
  };
  roots.forEach(visit);
  return files;
}

/** A file and everything it imports, encoded as FileDescriptorProtos: the answer reflection clients expect. */
function encodeWithImports(file: DescFile): Uint8Array[] {
  return [...withImports([file]).values()].map((f) => toBinary(FileDescriptorProtoSchema, f.proto));
}

/**
 * Registers grpc.reflection.v1.ServerReflection for the given services, so tools such as
 * `buf curl --list-methods` and grpcurl can discover them.
 */
export function registerReflection(router: ConnectRouter, services: readonly DescService[]): void {
  const files = withImports(services.map((s) => s.file));
  const registry = createRegistry(...files.values());
  const listed = services.map((s) => ({ name: s.typeName }));

  const answer = (req: ServerReflectionRequest): ReflectionAnswer => {
    const notFound = (what: string): ReflectionAnswer => ({
      case: "errorResponse",
      value: { errorCode: 5, errorMessage: `${what} not found` },
    });
    const request = req.messageRequest;
    switch (request.case) {
      case "listServices":
        return { case: "listServicesResponse", value: { service: listed } };
      case "fileByFilename": {
        const file = files.get(request.value);
        if (!file) return notFound(`file ${request.value}`);
        return { case: "fileDescriptorResponse", value: { fileDescriptorProto: encodeWithImports(file) } };
      }
      case "fileContainingSymbol": {
        const symbol = request.value;
        // A method is named Service.Method; its file is the service's.
        const desc = registry.get(symbol) ?? registry.get(symbol.slice(0, symbol.lastIndexOf(".")));
        if (!desc || !("file" in desc)) return notFound(`symbol ${symbol}`);
        return { case: "fileDescriptorResponse", value: { fileDescriptorProto: encodeWithImports(desc.file) } };
      }
      case "allExtensionNumbersOfType":
        return {
          case: "allExtensionNumbersResponse",
          value: { baseTypeName: request.value, extensionNumber: [] },
        };
      default:
        return { case: "errorResponse", value: { errorCode: 12, errorMessage: "request kind not supported" } };
    }
  };

  router.service(ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const req of requests) {
        yield { validHost: req.host, originalRequest: req, messageResponse: answer(req) };
      }
    },
  });
}
