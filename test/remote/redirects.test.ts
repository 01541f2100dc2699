/**
 * The remote client never follows a redirect (issue #10 item 5): a 307 or 308 would make fetch
 * send the whole signed body to whatever address the Location names, and a 301/302/303 would
 * still send the request on. Here a first server on 127.0.0.1 redirects every request to a
 * second one that records everything it receives: the CLI must refuse (exit 3) without
 * following, and the second server must receive nothing at all.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { envelope, home, stopAll, tiny, type Tiny } from './_support.js';

afterAll(stopAll);

const ORDER = 'ord_AAAAAAAAAAAAAAAAAAAAAA';
const SIGNER = { CRYPTOPAY_MCH_ID: 'M100001', CRYPTOPAY_SECRET: 'sk_test_not_a_real_secret_123456' };

/** The place the redirects point to: records every request and its body, answers success. */
async function target(): Promise<Tiny & { bodies: string[] }> {
  const bodies: string[] = [];
  const t = await tiny((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      bodies.push(body);
      envelope(res, req.method === 'GET' ? 'PAID' : null);
    });
  });
  return Object.assign(t, { bodies });
}

describe.each([301, 302, 303, 307, 308])('a remote answering %i', (status) => {
  it('is not followed, for a signed POST and for a GET: exit 3, a clear message, the target receives nothing', async () => {
    const elsewhere = await target();
    const redirector = await tiny((req, res) => {
      res.writeHead(status, { location: `${elsewhere.url}${req.url}`, 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 1, msg: 'success', data: 'PAID', systemTime: Date.now() }));
    });
    const h = home();
    const remote = ['--remote', redirector.url];
    const [create, status_, json] = await Promise.all([
      h.cli([...remote, 'order', 'create', '--oid', 'R-1', '--uid', 'u1', '--amount', '10'], { env: SIGNER }),
      h.cli([...remote, 'order', 'status', ORDER]),
      // --repeat: no read of the order's refunds first, the signed refund itself.
      h.cli([...remote, '--json', 'refund', '--id', ORDER, '--amount', '1', '--repeat', '--yes'], { env: SIGNER }),
    ]);
    const message = `the remote ${redirector.url} answered HTTP ${status}, a redirect to ${elsewhere.url}: redirects are not followed, so nothing was sent there (a signed request would go to another address); if that is the service's address, give it as the remote`;
    expect(create).toEqual({ code: 3, stdout: '', stderr: `error: ${message}\n` });
    expect(status_).toEqual({ code: 3, stdout: '', stderr: `error: ${message}\n` });
    expect(json.code).toBe(3);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr)).toEqual({ error: { kind: 'unavailable', message } });

    // The first server saw each request once (no retry of the GET either), the target none.
    expect(redirector.hits.sort()).toEqual(['GET /api/v1/order/' + ORDER + '/status', 'POST /api/v1/order', 'POST /api/v1/refund']);
    expect(elsewhere.hits).toEqual([]);
    expect(elsewhere.bodies).toEqual([]);
  });
});

it('a Location with credentials, or one that is not a URL, is not repeated in the message', async () => {
  const elsewhere = await target();
  const redirector = await tiny((req, res) => {
    const location = req.url!.includes('AAA') ? `${elsewhere.url.replace('http://', 'http://mallory:hunter2@')}/x` : 'http://mallory:hunter2@[bad/x';
    res.writeHead(307, { location });
    res.end();
  });
  const h = home();
  const [withCredentials, notAUrl] = await Promise.all([
    h.cli(['--remote', redirector.url, 'order', 'status', ORDER]),
    h.cli(['--remote', redirector.url, 'order', 'status', 'ord_BBB']),
  ]);
  expect(withCredentials).toEqual({
    code: 3,
    stdout: '',
    stderr: `error: the remote ${redirector.url} answered HTTP 307, a redirect to ${elsewhere.url}: redirects are not followed, so nothing was sent there (a signed request would go to another address); if that is the service's address, give it as the remote\n`,
  });
  expect(notAUrl).toEqual({
    code: 3,
    stdout: '',
    stderr: `error: the remote ${redirector.url} answered HTTP 307, a redirect: redirects are not followed, so nothing was sent there (a signed request would go to another address); if that is the service's address, give it as the remote\n`,
  });
  expect(elsewhere.hits).toEqual([]);
});
