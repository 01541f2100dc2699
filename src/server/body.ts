import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, invalid } from '../core/errors.js';

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
  if (!/^application\/json\b/i.test(req.header('content-type') ?? '')) throw invalid('Content-Type must be application/json');
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
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw invalid('the request body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the request body must be a JSON object');
  return body as Record<string, unknown>;
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
