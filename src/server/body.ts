import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, invalid } from '../core/errors.js';
import { duplicateKey, duplicateRefusal } from '../core/json-keys.js';

/**
 * Request bodies (src/server/app.ts): a signed request's JSON object, read from Node's request
 * within the size limit.
 */
export const MAX_BODY_BYTES = 64 * 1024;

/** What a body is read from: a request's headers and its bytes (a socket's, or a web Request's). */
export interface BodySource {
  header(name: string): string | undefined;
  body(limit: number): Promise<Buffer | 'too_large'>;
}

/**
 * The body of a signed request as one JSON object, at most MAX_BODY_BYTES whatever
 * Content-Length says. On a socket it is read straight from Node's request.
 */
export async function readJsonObject(req: BodySource): Promise<Record<string, unknown>> {
  checkContentType(req.header('content-type'));
  const coding = req.header('content-encoding');
  if (coding !== undefined && coding.trim() !== '' && coding.trim().toLowerCase() !== 'identity') {
    throw invalid(`Content-Encoding ${coding.trim().slice(0, 40)} is not accepted: send the body as it is (identity)`);
  }
  // Node's parser frames a body by its last transfer-coding, chunked, and hands the bytes over as
  // they came: a gzip before it was ignored, while an intermediary that honours it reads another
  // body (an attacker review). Only chunked framing, or none (Content-Length), is read.
  const transfer = req.header('transfer-encoding');
  if (transfer !== undefined && transfer.trim().toLowerCase() !== 'chunked') {
    throw invalid(`Transfer-Encoding ${transfer.trim().slice(0, 40)} is not accepted: send the body with Content-Length, or chunked and no other coding`);
  }
  const tooLarge = () => new AppError('too_large', `the request body is larger than ${MAX_BODY_BYTES / 1024} KiB`);
  if (Number(req.header('content-length')) > MAX_BODY_BYTES) throw tooLarge();
  let bytes: Buffer | 'too_large';
  try {
    bytes = await req.body(MAX_BODY_BYTES);
  } catch {
    // The client went away mid-body: its fault, not an internal error.
    throw invalid('the request body could not be read to its end');
  }
  if (bytes === 'too_large') throw tooLarge();
  // Decoding would turn a byte that is not UTF-8 into U+FFFD: the body read would not be the one
  // sent, and a signature over U+FFFD would pass for other bytes (decisions §1: well-formed text).
  if (!isUtf8(bytes)) throw invalid('the request body is not valid UTF-8');
  const text = bytes.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw invalid('the request body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the request body must be a JSON object');
  const twice = duplicateKey(text, body);
  if (twice !== undefined) throw invalid(duplicateRefusal(twice));
  return body as Record<string, unknown>;
}

/**
 * The media type is application/json exactly (a type that only starts so, such as
 * application/json-seq, is another format), in any case, with parameters; a charset, if given,
 * is UTF-8, the only one the body is read as.
 */
function checkContentType(header: string | undefined): void {
  if (header === 'application/json') return;
  const [type, ...params] = (header ?? '').split(';');
  if (type!.trim().toLowerCase() !== 'application/json') throw invalid('Content-Type must be application/json');
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq < 0 || p.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const value = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
    // utf8 is a label of UTF-8 too (WHATWG Encoding), which some clients send.
    if (value !== 'utf-8' && value !== 'utf8') throw invalid('Content-Type charset must be utf-8: the body is read as UTF-8');
  }
}

/**
 * Node's request body, or 'too_large' as soon as it passes `limit` (the rest is left unread).
 * Fails when the response closes first: the socket layer answered a body that was malformed or
 * too slow, and the rest of it will never come.
 */
export function readIncoming(incoming: IncomingMessage, res: ServerResponse, limit: number): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      incoming.off('data', onData).off('end', onEnd).off('error', onFail).off('close', onClose);
      res.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        done();
        incoming.pause();
        resolve('too_large');
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onFail = (e: Error) => {
      done();
      reject(e);
    };
    const onClose = () => onFail(new Error('the client closed the connection mid-body'));
    if (incoming.readableEnded) {
      resolve(Buffer.alloc(0));
      return;
    }
    incoming.on('data', onData).on('end', onEnd).on('error', onFail).on('close', onClose);
    res.once('close', onClose);
  });
}
