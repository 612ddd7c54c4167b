import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { invalidArgument, notFound } from '../errors/api-error.ts';
import { statusDetailsBin } from './status-details.ts';

/** Fields of a message as [number, value] pairs: varints as numbers, the rest as bytes. */
function fields(bytes: Uint8Array): [number, number | Uint8Array][] {
  const reader = new BinaryReader(bytes);
  const out: [number, number | Uint8Array][] = [];
  while (reader.pos < reader.len) {
    const [number, wireType] = reader.tag();
    out.push([number, wireType === WireType.Varint ? reader.int32() : reader.bytes()]);
  }
  return out;
}

const text = (value: number | Uint8Array | undefined): string =>
  new TextDecoder().decode(value as Uint8Array);

describe('statusDetailsBin()', () => {
  test('encodes code, message and the ErrorInfo reason as google.rpc.Status', () => {
    const status = fields(statusDetailsBin(notFound('workspaces/w/daiEngines/e')));
    expect(status[0]).toEqual([1, 5]);
    expect(text(status[1]?.[1])).toBe('"workspaces/w/daiEngines/e" was not found');
    const any = fields(status[2]?.[1] as Uint8Array);
    expect(text(any[0]?.[1])).toBe('type.googleapis.com/google.rpc.ErrorInfo');
    const info = fields(any[1]?.[1] as Uint8Array);
    expect([text(info[0]?.[1]), text(info[1]?.[1])]).toEqual(['RESOURCE_NOT_FOUND', 'engine.h2o.ai']);
  });

  test('carries field violations in a BadRequest', () => {
    const status = fields(statusDetailsBin(invalidArgument('dai_engine.cpu', 'must be at most 8')));
    const any = fields(status[3]?.[1] as Uint8Array);
    expect(text(any[0]?.[1])).toBe('type.googleapis.com/google.rpc.BadRequest');
    const violation = fields(fields(any[1]?.[1] as Uint8Array)[0]?.[1] as Uint8Array);
    expect(violation.map(([, v]) => text(v))).toEqual(['dai_engine.cpu', 'must be at most 8']);
  });
});
