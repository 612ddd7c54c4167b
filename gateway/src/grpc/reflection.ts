/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha) served from the descriptor set that
 * `make generate` writes, file by file as protoc compiled them. (@grpc/reflection rebuilds the
 * files from a proto-loader definition, which merges each package into one file without its
 * imports, so clients such as grpcurl cannot resolve google.protobuf.Duration.)
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
  type DescriptorProto,
  type FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';
import { status, type Server, type ServerDuplexStream, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

/** The files of a descriptor set, and where each symbol is declared. */
export interface DescriptorIndex {
  /** Encoded file descriptors by file name. */
  files: ReadonlyMap<string, Uint8Array>;
  /** The direct imports of each file. */
  imports: ReadonlyMap<string, readonly string[]>;
  /** The file declaring each fully qualified symbol: package, message, field, enum, service, method. */
  symbols: ReadonlyMap<string, string>;
  /** The file declaring each extension, by `<extendee>#<number>`. */
  extensions: ReadonlyMap<string, string>;
  services: readonly string[];
}

/** Indexes a serialized FileDescriptorSet. */
export function indexDescriptors(set: Uint8Array): DescriptorIndex {
  const files = new Map<string, Uint8Array>();
  const imports = new Map<string, string[]>();
  const symbols = new Map<string, string>();
  const extensions = new Map<string, string>();
  const services: string[] = [];
  for (const file of fromBinary(FileDescriptorSetSchema, set).file) {
    files.set(file.name, toBinary(FileDescriptorProtoSchema, file));
    imports.set(file.name, file.dependency);
    const scope = file.package === '' ? '' : `${file.package}.`;
    indexFile(file, scope, (symbol) => symbols.set(symbol, file.name));
    for (const extension of allExtensions(file)) {
      extensions.set(`${extension.extendee.replace(/^\./, '')}#${extension.number}`, file.name);
    }
    for (const service of file.service) {
      const name = `${scope}${service.name}`;
      services.push(name);
      symbols.set(name, file.name);
      for (const method of service.method) symbols.set(`${name}.${method.name}`, file.name);
    }
  }
  return { files, imports, symbols, extensions, services };
}

function indexFile(file: FileDescriptorProto, scope: string, add: (symbol: string) => void): void {
  const messages = (list: readonly DescriptorProto[], prefix: string): void => {
    for (const message of list) {
      const name = `${prefix}${message.name}`;
      add(name);
      for (const field of message.field) add(`${name}.${field.name}`);
      for (const nested of message.enumType) add(`${name}.${nested.name}`);
      messages(message.nestedType, `${name}.`);
    }
  };
  messages(file.messageType, scope);
  for (const enumType of file.enumType) add(`${scope}${enumType.name}`);
}

function allExtensions(file: FileDescriptorProto): FileDescriptorProto['extension'] {
  const nested = (list: readonly DescriptorProto[]): FileDescriptorProto['extension'] =>
    list.flatMap((message) => [...message.extension, ...nested(message.nestedType)]);
  return [...file.extension, ...nested(file.messageType)];
}

/** A file and everything it imports, transitively, the file first. */
export function withImports(index: DescriptorIndex, name: string): Uint8Array[] {
  const seen = new Set<string>();
  const pending = [name];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (seen.has(next)) continue;
    seen.add(next);
    pending.push(...(index.imports.get(next) ?? []));
  }
  return [...seen].flatMap((file) => {
    const bytes = index.files.get(file);
    return bytes === undefined ? [] : [bytes];
  });
}

/** One reflection request, as proto-loader decodes it (field names as in the .proto). */
interface ReflectionRequest {
  host?: string;
  file_by_filename?: string;
  file_containing_symbol?: string;
  file_containing_extension?: { containing_type: string; extension_number: number };
  all_extension_numbers_of_type?: string;
  list_services?: string;
}

/** The answer to one reflection request. */
export function answer(index: DescriptorIndex, request: ReflectionRequest): Record<string, unknown> {
  const files = (name: string | undefined): Record<string, unknown> =>
    name === undefined
      ? notFound('not found')
      : { file_descriptor_response: { file_descriptor_proto: withImports(index, name) } };
  const notFound = (message: string): Record<string, unknown> => ({
    error_response: { error_code: status.NOT_FOUND, error_message: message },
  });
  if (request.list_services !== undefined) {
    return { list_services_response: { service: index.services.map((name) => ({ name })) } };
  }
  if (request.file_by_filename !== undefined) {
    const name = request.file_by_filename;
    return index.files.has(name) ? files(name) : notFound(`File not found: ${name}`);
  }
  if (request.file_containing_symbol !== undefined) {
    const file = index.symbols.get(request.file_containing_symbol.replace(/^\./, ''));
    return file === undefined ? notFound(`Symbol not found: ${request.file_containing_symbol}`) : files(file);
  }
  if (request.file_containing_extension !== undefined) {
    const { containing_type: type, extension_number: number } = request.file_containing_extension;
    const file = index.extensions.get(`${type}#${number}`);
    return file === undefined ? notFound(`Extension not found: ${type} ${number}`) : files(file);
  }
  if (request.all_extension_numbers_of_type !== undefined) {
    const type = request.all_extension_numbers_of_type;
    const numbers = [...index.extensions.keys()]
      .filter((key) => key.startsWith(`${type}#`))
      .map((key) => Number(key.slice(type.length + 1)));
    return { all_extension_numbers_response: { base_type_name: type, extension_number: numbers } };
  }
  return {
    error_response: { error_code: status.INVALID_ARGUMENT, error_message: 'Unknown reflection request' },
  };
}

/** The reflection services' grpc-js definitions, from the .proto files @grpc/reflection ships. */
function reflectionDefinitions(): ServiceDefinition[] {
  const require = createRequire(import.meta.url);
  const root = join(dirname(require.resolve('@grpc/reflection/package.json')), 'build', 'proto');
  return ['v1', 'v1alpha'].map((version) => {
    const name = `grpc.reflection.${version}.ServerReflection`;
    const definition = loadSync(`grpc/reflection/${version}/reflection.proto`, {
      includeDirs: [root],
      keepCase: true,
    })[name];
    if (definition === undefined || !('ServerReflectionInfo' in definition))
      throw new Error(`${name} is missing from @grpc/reflection`);
    return definition;
  });
}

/** Adds both reflection services to `server`, answering from `descriptorSet`. */
export function addReflection(server: Server, descriptorSet: Uint8Array): void {
  const index = indexDescriptors(descriptorSet);
  for (const definition of reflectionDefinitions()) {
    server.addService(definition, {
      ServerReflectionInfo: (call: ServerDuplexStream<ReflectionRequest, object>) => {
        call.on('data', (request: ReflectionRequest) => {
          call.write({
            valid_host: request.host ?? '',
            original_request: request,
            ...answer(index, request),
          });
        });
        call.on('end', () => {
          call.end();
        });
      },
    });
  }
}
