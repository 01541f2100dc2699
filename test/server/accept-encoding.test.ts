import { describe, expect, it } from 'vitest';
import { acceptsGzip } from '../../src/server/accept-encoding.js';

describe('acceptsGzip (RFC 9110 §12.5.3)', () => {
  it('takes gzip as browsers and HTTP clients send it', () => {
    for (const h of ['gzip', 'gzip, deflate, br', 'br;q=1.0, gzip;q=0.8, *;q=0.1', 'GZIP', 'x-gzip', ' deflate , gzip ;q=0.5', '*', 'identity, *;q=1', 'gzip;q=1.000']) {
      expect([h, acceptsGzip(h)]).toEqual([h, true]);
    }
  });

  it('answers plain without the header, when gzip is refused or not named, and when a weight is malformed', () => {
    for (const h of [undefined, '', 'identity', 'br, deflate', 'gzip;q=0', 'gzip;q=0.000', '*;q=0', 'gzip;q=0, *', '*;q=0.5, gzip;q=0', 'gzip;q=abc', 'gzip;q=2', 'gzip;q=1.5', 'gzip;q=0.0001', 'gzipx', 'gzip-ish']) {
      expect([h, acceptsGzip(h)]).toEqual([h, false]);
    }
  });

  it('lets an explicit gzip decide over *, whichever comes first', () => {
    expect(acceptsGzip('*;q=0, gzip')).toBe(true);
    expect(acceptsGzip('gzip, *;q=0')).toBe(true);
    expect(acceptsGzip('*, gzip;q=0')).toBe(false);
  });
});
