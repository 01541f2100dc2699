import { describe, expect, it } from 'vitest';
import { openLedger } from '../../src/store/db.js';
import { statementsOf } from '../../src/store/statements.js';

describe('statementsOf', () => {
  it('prepares each statement once per connection, on first use, and keeps it', () => {
    const ledger = openLedger(':memory:');
    try {
      const s = statementsOf(ledger);
      expect(statementsOf(ledger)).toBe(s);
      const status = s.status;
      expect(s.status).toBe(status);
      expect(status.get('ord_none')).toBeUndefined();
      // Every statement still answers, whichever is used first.
      expect(s.nonceSeen.get({ merchantId: 'M1', nonce: 'n' })).toBeUndefined();
      expect(Object.keys(s)).toContain('insertOrder');
    } finally {
      ledger.close();
    }
  });
});
