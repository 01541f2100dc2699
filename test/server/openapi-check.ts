import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { openApiDocument } from '../../src/server/openapi.js';

/**
 * Every answer the server tests see is checked against the OpenAPI document the server serves
 * (issue #10 item 11): its status must be documented for that operation, and its body must match
 * the documented schema. The helpers in helpers.ts call this on every reply.
 */

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

type Json = Record<string, any>;
const doc = openApiDocument() as Json;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: 'openapi-components', $defs: doc.components.schemas });
const compiled = new Map<string, ValidateFunction>();

/** Statuses the HTTP layer itself may answer on any path, known or not. */
const ANY_PATH = new Set([400, 404, 405, 408, 417, 431, 500, 503]);

const templates = Object.keys(doc.paths).map((t) => ({
  template: t,
  re: new RegExp(`^${t.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

function validatorFor(key: string, schema: Json): ValidateFunction {
  let v = compiled.get(key);
  if (!v) {
    const resolved = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"openapi-components#/$defs/'));
    v = ajv.compile(resolved);
    compiled.set(key, v);
  }
  return v;
}

export interface CheckedResponse {
  status: number;
  text: string;
  /** The reply's headers, when the caller has them: required documented headers are checked. */
  headers?: { get(name: string): string | null };
}

/** How many replies were checked: a test can tell that the hook runs. */
export const checkedReplies = { count: 0 };

/** The documented response of this request, or throws saying what the document does not cover. */
function documentedResponse(method: string, path: string, status: number): { key: string; schema: Json | undefined; headers?: Json } {
  const bare = path.split('?')[0]!;
  const match = templates.find((t) => t.re.test(bare));
  if (!match) {
    if (!ANY_PATH.has(status)) throw new Error(`${method} ${bare} (no documented path) answered ${status}, which only a documented path may answer`);
    return { key: 'ErrorEnvelope', schema: doc.components.schemas.ErrorEnvelope };
  }
  const ops = doc.paths[match.template] as Json;
  const m = method.toLowerCase();
  const op = ops[m] ?? (m === 'head' ? ops.get : undefined);
  if (!op) {
    // Another method on a documented path: its 405 is documented on the path's operations.
    const any = Object.values(ops)[0] as Json;
    if (status !== 405 && !ANY_PATH.has(status)) throw new Error(`${method} ${match.template} is not an operation, yet it answered ${status}`);
    const r = any.responses[String(status)];
    if (!r) throw new Error(`status ${status} of ${method} ${match.template} is not documented`);
    return { key: `${match.template} * ${status}`, schema: r.content?.['application/json']?.schema, headers: r.headers };
  }
  const r = op.responses[String(status)] ?? op.responses.default;
  if (!r) throw new Error(`status ${status} of ${method.toUpperCase()} ${match.template} is not documented (documented: ${Object.keys(op.responses).join(', ')})`);
  return { key: `${match.template} ${m} ${status}`, schema: r.content?.['application/json']?.schema, headers: r.headers };
}

/** Throws when this reply to `method path` is not what the document says it may be. */
export function checkReply(method: string, path: string, reply: CheckedResponse): void {
  // A page for people (HTML, outside the API and its document) is not checked here.
  const type = reply.headers?.get('content-type');
  if (type && !/^application\/json\b/.test(type) && !templates.some((t) => t.re.test(path.split('?')[0]!))) return;
  const { key, schema, headers } = documentedResponse(method, path, reply.status);
  checkedReplies.count++;
  if (reply.headers) {
    for (const [name, h] of Object.entries<Json>(headers ?? {})) {
      const value = reply.headers.get(name);
      if (h.required && value === null) throw new Error(`${method} ${path} answered ${reply.status} without its documented header ${name}`);
      if (value !== null && h.schema && !validatorFor(`header ${key} ${name}`, h.schema)(value)) {
        throw new Error(`${method} ${path} answered ${reply.status} with a header ${name}: ${value} the document does not allow`);
      }
    }
  }
  if (method.toUpperCase() === 'HEAD') {
    if (reply.text !== '') throw new Error(`HEAD ${path} answered a body`);
    return;
  }
  if (!schema) return;
  let body: unknown;
  try {
    body = JSON.parse(reply.text);
  } catch {
    throw new Error(`${method} ${path} answered ${reply.status} with a body that is not JSON: ${reply.text.slice(0, 200)}`);
  }
  const validate = validatorFor(key, schema);
  if (!validate(body)) {
    throw new Error(`${method} ${path} answered ${reply.status} with a body the document does not allow: ${ajv.errorsText(validate.errors)}\n${reply.text.slice(0, 500)}`);
  }
}

/** A refusal made by the HTTP layer with no request it belongs to (a connection over the cap, a timeout). */
export function checkRawRefusal(reply: CheckedResponse): void {
  checkReply('GET', '/no/documented/path', reply);
}

/** The request body schema of a signed operation, compiled: what the document says the server takes. */
export function requestValidator(path: string): ValidateFunction {
  const schema = doc.paths[path].post.requestBody.content['application/json'].schema as Json;
  return validatorFor(`${path} request`, schema);
}

/** A callback body as a receiver got it, checked against the document's webhooks (decisions §9). */
export function checkCallback(body: Json): void {
  const hook = doc.webhooks?.[body.event];
  if (!hook) throw new Error(`the OpenAPI document has no webhook for event ${JSON.stringify(body.event)}`);
  const v = validatorFor(`webhook ${body.event}`, hook.post.requestBody.content['application/json'].schema);
  if (!v(body)) throw new Error(`callback ${String((body as Json).event)} does not match the OpenAPI document: ${ajv.errorsText(v.errors)}\n${JSON.stringify(body)}`);
}
