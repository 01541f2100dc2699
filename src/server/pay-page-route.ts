import { isAppError } from '../core/errors.js';
import type { Answer } from './app.js';
import { renderNotFound, renderPayPage } from './pay-page.js';
import { loadPayPage, loadPayState, type PayPageSource, type PayState } from './pay-page-data.js';

/** The page as HTML, and the JSON state its script polls. */
export function payPageRoutes(source: PayPageSource, now: () => number) {
  return {
    async page(id: string): Promise<Answer> {
      try {
        return renderPayPage(await loadPayPage(source, id), now());
      } catch (e) {
        if (isAppError(e) && e.kind === 'not_found') return renderNotFound();
        throw e;
      }
    },
    /** Not found answers the envelope's "Order not found", like the status endpoint. */
    state(id: string): Promise<PayState> {
      return loadPayState(source, id);
    },
  };
}
