import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { ReplyReader, parseReplies } from '../../../src/chains/watch/rpc.js';
import { handler } from '../../helpers/handler.js';

/** What parseReplies must answer: JSON.parse of the whole text, each reply's result array mapped. */
function expected(text: string, element: (raw: unknown) => unknown): unknown {
  const parsed = JSON.parse(text) as unknown;
  for (const r of Array.isArray(parsed) ? parsed : [parsed]) {
    if (r && typeof r === 'object' && Array.isArray((r as { result?: unknown }).result)) {
      (r as { result: unknown[] }).result = (r as { result: unknown[] }).result.map(element);
    }
  }
  return parsed;
}

const tag = (raw: unknown) => ({ mapped: raw });

/** The text fed to a ReplyReader in pieces cut at the given offsets (as a body's chunks arrive). */
function chunked(text: string, cuts: number[], element: (raw: unknown) => unknown): unknown {
  const r = new ReplyReader(element);
  let at = 0;
  for (const c of [...new Set(cuts.map((x) => x % (text.length + 1)))].sort((a, b) => a - b)) {
    r.push(text.slice(at, c));
    at = c;
  }
  r.push(text.slice(at));
  return r.end();
}
const outcome = (f: () => unknown) => {
  try {
    return { ok: f() };
  } catch {
    return { threw: true };
  }
};

// Keys and strings that stress the reader: brackets, quotes, backslashes and the word "result" inside strings.
const tricky = fc.constantFrom('result', '"result"', '[', ']', '{', '}', ',', ':', '\\', '\\"', '"', 'a"b', 'x\\\\', 'é€😀', '');
const str = fc.oneof(fc.string(), tricky);
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), str, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(str, tie('value'), { maxKeys: 4 }),
})).value;
const reply = fc.oneof(
  fc.record({ jsonrpc: fc.constant('2.0'), id: fc.integer(), result: fc.array(json, { maxLength: 6 }) }),
  fc.record({ jsonrpc: fc.constant('2.0'), id: fc.integer(), result: json }),
  fc.record({ id: fc.integer(), error: fc.record({ code: fc.integer(), message: str, data: json }) }),
  fc.dictionary(str, json, { maxKeys: 4 }),
);
const answer = fc.oneof(reply, fc.array(reply, { maxLength: 4 }), fc.array(json, { maxLength: 3 }), json);
const spaced = (v: unknown, indent: number) => JSON.stringify(v, null, indent);

describe('reading a JSON-RPC answer one result element at a time', () => {
  it('answers what JSON.parse answers, result elements mapped, however the text is spaced', () => {
    fc.assert(
      fc.property(answer, fc.constantFrom(0, 1, 2, '\t' as unknown as number), fc.array(fc.nat(), { maxLength: 12 }), (v, indent, cuts) => {
        const text = spaced(v, indent);
        expect(parseReplies(text, tag)).toEqual(expected(text, tag));
        expect(chunked(text, cuts, tag)).toEqual(expected(text, tag));
        // One character at a time: every boundary falls somewhere.
        expect(chunked(text, Array.from({ length: text.length }, (_, i) => i), tag)).toEqual(expected(text, tag));
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses exactly what JSON.parse refuses: truncated, edited and spliced texts', () => {
    const edits = fc.constantFrom(',', ']', '}', '[', '{', '"', ':', ' ', '\\', '0', ',,', '[]', '{}');
    fc.assert(
      fc.property(fc.array(reply, { minLength: 1, maxLength: 3 }), fc.boolean(), fc.nat(), fc.nat(), edits, fc.array(fc.nat(), { maxLength: 6 }), (rs, batch, cut, at, insert, cuts) => {
        const full = JSON.stringify(batch ? rs : rs[0]);
        for (const text of [full.slice(0, cut % (full.length + 1)), full.slice(0, at % full.length) + insert + full.slice(at % full.length), full.slice(0, at % full.length) + full.slice((at % full.length) + 1)]) {
          expect(outcome(() => parseReplies(text, tag))).toEqual(outcome(() => expected(text, tag)));
          expect(outcome(() => chunked(text, cuts, tag))).toEqual(outcome(() => expected(text, tag)));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('never parses an eth_getLogs answer whole: each log alone, then the answer without them', () => {
    const log = (i: number) => ({ address: '0x' + 'ab'.repeat(20), topics: ['0x' + 'dd'.repeat(32)], data: '0x' + i.toString(16).padStart(64, '0'), logIndex: `0x${i.toString(16)}` });
    const text = JSON.stringify([
      { jsonrpc: '2.0', id: 7, result: Array.from({ length: 50 }, (_, i) => log(i)) },
      { jsonrpc: '2.0', id: 8, result: { number: '0x1' } },
    ]);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const seen: unknown[] = [];
      const out = parseReplies(text, (raw) => (seen.push(raw), seen.length)) as { result: unknown }[];
      expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => log(i)));
      expect(out[0]!.result).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect(out[1]!.result).toEqual({ number: '0x1' });
      const longest = Math.max(...parse.mock.calls.map((c) => String(c[0]).length));
      expect(longest).toBeLessThan(text.length / 20);
    } finally {
      parse.mockRestore();
    }
  });

  it('handles the cases a node writes and the odd ones alike', () => {
    const cases = [
      '{"jsonrpc":"2.0","id":1,"result":[]}',
      '[{"jsonrpc":"2.0","id":1,"result":[{"a":"]"},{"b":"[\\"}"}]},{"jsonrpc":"2.0","id":2,"result":{"result":[1]}},{"id":3,"error":{"code":-1,"message":"x"}}]',
      '{"res\\u0075lt":[1,2],"id":1}',
      '{"result":[1],"result":[2,3]}',
      '{"result":[1],"result":[]}',
      '{"result":[1],"result":5}',
      '[{"result":[1],"result":[]},{"result":[2]}]',
      '[5,"x",{"result":["a\\\\",1]},[1],{"result":[3]}]',
      '{"result":["\\\"]", "]"]}',
      '',
      '   ',
      '{"result":[1],"other":{"result":[5]}}',
      ' \n[ { "result" : [ 1 , "a" , [ 2 ] , { } ] } ] \n',
      '[1,{"result":[1]}]',
      '[[],{"result":[1]}]',
      '"result"',
      '{"result":[1,]}',
      '{"result":[,1]}',
      '{"result":[1 2]}',
      '{"result":[1}',
      '{"result":[1]]',
      '{"result":[1]} x',
      // Object elements, read whole up to their first '}' when that parses, else character by character.
      '{"result":[{"a":"}"},{"b":{"c":1}},{"d":[1,{"e":"}}"}]},{}]}',
      '{"result":[{"a":1} , {"b":2} ]}',
      '{"result":[{"a":1}{"b":2}]}',
      '{"result":[{"a":1}"x"]}',
      '{"result":[{"a":1}1]}',
      '{"result":[{"a":1},]}',
      '{"result":[{"a":1}}]}',
      '{"result":[{"a":1]}',
      '{"result":[{"a":"}"]}',
      '{"result":[{"a":1},{"b":2}],"x":{"y":[{"z":1}]}}',
    ];
    for (const text of cases) {
      expect([text, outcome(() => parseReplies(text, tag))]).toEqual([text, outcome(() => expected(text, tag))]);
      const each = Array.from({ length: text.length }, (_, i) => i);
      expect([text, outcome(() => chunked(text, each, tag))]).toEqual([text, outcome(() => expected(text, tag))]);
    }
  });
});

describe('the JSON-RPC client reading a body as it arrives', () => {
  it('maps each log of a batch answer written in small pieces, refuses garbage as not JSON, and times out mid-body', async () => {
    const { createServer } = await import('node:http');
    const { createRpcClient, RpcTransportError } = await import('../../../src/chains/watch/rpc.js');
    let body = '';
    let stall = false;
    const server = createServer(handler(async (req, res) => {
      for await (const _ of req);
      res.writeHead(200, { 'content-type': 'application/json' });
      // Pieces of 7 bytes: strings, escapes and multi-byte characters fall across them.
      const bytes = Buffer.from(body);
      for (let i = 0; i < bytes.length; i += 7) {
        res.write(bytes.subarray(i, i + 7));
        if (i % 700 === 0) await new Promise((r) => setImmediate(r));
      }
      if (!stall) res.end();
    }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const rpc = createRpcClient({ url, timeoutMs: 500 });
      const logs = Array.from({ length: 40 }, (_, i) => ({ data: `0x${i}`, note: 'é€😀 "quoted" \\ ]}', i }));
      body = JSON.stringify([
        { jsonrpc: '2.0', id: 2, result: { number: '0x1' } },
        { jsonrpc: '2.0', id: 1, result: logs },
        { jsonrpc: '2.0', id: 3, error: { code: -32000, message: 'nope' } },
      ]);
      // Ids of this client start at 1 for a fresh client.
      const seen: unknown[] = [];
      // Told when the answer starts to arrive: before any of its body is read.
      const answered: number[] = [];
      const out = await rpc.batch(
        [{ method: 'eth_getLogs', params: [] }, { method: 'eth_getBlockByNumber', params: [] }, { method: 'x', params: [] }],
        { element: (raw) => (seen.push(raw), { mapped: raw }), onAnswer: () => answered.push(seen.length) },
      );
      expect(answered).toEqual([0]);
      expect(seen).toEqual(logs);
      expect(out[0]).toEqual({ ok: true, result: logs.map((l) => ({ mapped: l })) });
      expect(out[1]).toEqual({ ok: true, result: { number: '0x1' } });
      expect(out[2]!.ok).toBe(false);
      body = `${'{"jsonrpc":"2.0","id":4,"result":[1,2,'.padEnd(50, ' ')}}]`;
      await expect(rpc.batch([{ method: 'eth_getLogs', params: [] }], { element: (x) => x })).rejects.toThrow(/not JSON \("\{\\"jsonrpc/);
      expect(await rpc.batch([{ method: 'eth_getLogs', params: [] }], { element: (x) => x }).catch((e) => e)).toBeInstanceOf(RpcTransportError);
      stall = true;
      body = '{"jsonrpc":"2.0","id":6,"result":[1,2';
      await expect(rpc.batch([{ method: 'eth_getLogs', params: [] }], { element: (x) => x })).rejects.toThrow(/no answer within 500 ms/);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
