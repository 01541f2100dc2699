/**
 * Which remote addresses are used as given, and which need --insecure-http (issue #10 item 5):
 * the table of what a user may type. The CLI side is in plain-http.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { blockedPorts } from '../../src/core/blocked-ports.js';
import { checkRemoteUrl } from '../../src/remote/remote-url.js';

const refusal = (url: string) => {
  try {
    checkRemoteUrl(url, { insecureHttp: false });
    return null;
  } catch (e) {
    return (e as Error).message;
  }
};

describe('plain http is allowed without the flag to this machine only', () => {
  it.each([
    'http://127.0.0.1:8080',
    'http://127.0.0.2/',
    'http://127.255.255.254:2',
    'http://127.1:8080', // URL reads it as 127.0.0.1
    'http://2130706433/', // 127.0.0.1 as one number
    'http://localhost:8080/api/v1',
    'http://LOCALHOST:8080',
    'http://[::1]:8080',
    'http://[0:0:0:0:0:0:0:1]/',
    'http://[::ffff:127.0.0.1]:8080',
    'https://pay.example.com',
    'https://10.0.0.5:8443/api/v1',
  ])('%s is used as given', (url) => {
    expect(refusal(url)).toBeNull();
    expect(checkRemoteUrl(url, { insecureHttp: false })).toBe(url);
  });

  it.each([
    'http://pay.example.com',
    'http://10.0.0.5:8080',
    'http://192.168.1.10',
    'http://0.0.0.0:8080',
    'http://128.0.0.1',
    'http://localhost.example.com',
    'http://127.0.0.1.example.com',
    'http://[::2]',
    'http://[::ffff:10.0.0.1]',
  ])('%s needs --insecure-http', (url) => {
    expect(refusal(url)).toMatch(/is plain http to a host that is not this machine/);
    expect(checkRemoteUrl(url, { insecureHttp: true })).toBe(url);
  });

  it.each(['ftp://pay.example.com', 'pay.example.com', 'file:///etc/passwd', '', 'http://'])('%j is not a remote', (url) => {
    expect(refusal(url)).toMatch(/^the remote must be an http or https URL, got /);
  });

  it('credentials are refused even with --insecure-http, and never repeated', () => {
    for (const url of ['https://bob:s3cret-pw@pay.example.com/', 'http://bob@127.0.0.1:1', 'https://:s3cret-pw@pay.example.com']) {
      expect(() => checkRemoteUrl(url, { insecureHttp: true })).toThrow(/holds a user name or password/);
      expect(refusal(url)).not.toMatch(/bob|s3cret/);
    }
  });

  it('control characters in what the user typed are not echoed raw', () => {
    expect(refusal('ftp://x\u001b[2J\u202e')).toBe('the remote must be an http or https URL, got "ftp://x\ufffd[2J\ufffd"');
  });
});

it('the client itself refuses a base URL with credentials, for callers that skip the CLI', async () => {
  const { RemotePaymentService } = await import('../../src/remote/client.js');
  let sent = 0;
  expect(() => new RemotePaymentService({ baseUrl: 'https://bob:s3cret-pw@pay.example.com/api/v1', fetch: async () => (sent++, new Response()) })).toThrow(
    /^the remote URL holds a user name or password \(https:\/\/\*\*\*@pay\.example\.com\/\)/,
  );
  expect(sent).toBe(0);
});

// Found by an operator review: serve on port 6666 answered curl, and `--remote
// http://127.0.0.1:6666` failed with "bad port" alone. Node's fetch (and every browser) refuses
// the fetch standard's blocked ports before sending anything; the remote is now refused at once,
// saying so.
describe('a port that fetch refuses', () => {
  it.each(['http://127.0.0.1:6666', 'http://localhost:10080/api/v1', 'https://pay.example.com:587'])('%s is refused, naming the port and why', (url) => {
    const port = new URL(url).port;
    expect(refusal(url)).toBe(
      `the remote ${url} uses port ${port}: port ${port} is one that browsers and fetch (the HTTP client of this CLI) refuse to connect to, whatever answers there; run serve on another port`,
    );
  });

  it('is exactly what Node\'s own fetch refuses: every port of the list, and none of their neighbours', async () => {
    const saysBadPort = async (port: number) => {
      try {
        await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) }).then((r) => r.body?.cancel());
        return false;
      } catch (e) {
        return /bad port/.test(String((e as { cause?: { message?: string } }).cause?.message));
      }
    };
    const listed = blockedPorts();
    expect(listed).toHaveLength(82);
    // Blocked before any connection is made: nothing is sent to these.
    expect((await Promise.all(listed.map(saysBadPort))).every(Boolean)).toBe(true);
    const neighbours = [2, 6664, 6670, 6678, 6680, 10079, 10081, 4191, 5062].filter((p) => !listed.includes(p));
    expect(await Promise.all(neighbours.map(saysBadPort))).toEqual(neighbours.map(() => false));
  });
});
