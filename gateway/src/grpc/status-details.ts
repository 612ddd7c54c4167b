import { BinaryWriter } from '@bufbuild/protobuf/wire';
import type { ApiError } from '../errors/api-error.ts';

/**
 * The `grpc-status-details-bin` trailer: the error as a binary google.rpc.Status with the same
 * ErrorInfo and BadRequest details the REST body carries, so gRPC clients that read rich errors
 * (AIP-193) see the reason and the offending fields.
 */
export function statusDetailsBin(error: ApiError): Buffer {
  const json = error.toStatus();
  const status = new BinaryWriter().uint32(8).int32(json.code).uint32(18).string(json.message);
  for (const detail of json.details) {
    const typeUrl = String(detail['@type']);
    const value = typeUrl.endsWith('ErrorInfo') ? errorInfo(error) : badRequest(error);
    status.uint32(26).fork().uint32(10).string(typeUrl).uint32(18).bytes(value).join();
  }
  return Buffer.from(status.finish());
}

/** google.rpc.ErrorInfo {reason = 1, domain = 2}. */
function errorInfo(error: ApiError): Uint8Array {
  const detail = error.toStatus().details[0] ?? {};
  return new BinaryWriter()
    .uint32(10)
    .string(error.reason)
    .uint32(18)
    .string(String(detail['domain']))
    .finish();
}

/** google.rpc.BadRequest {repeated FieldViolation field_violations = 1 {field = 1, description = 2}}. */
function badRequest(error: ApiError): Uint8Array {
  const writer = new BinaryWriter();
  for (const v of error.violations) {
    writer.uint32(10).fork().uint32(10).string(v.field).uint32(18).string(v.description).join();
  }
  return writer.finish();
}
