import { isAppError } from '../core/errors.js';
import type { Answer } from './app.js';
import { renderNotFound, renderPayPage } from './pay-page.js';
import { loadPayPage, loadPayState, type PayPageSource, type PayState } from './pay-page-data.js';

function notFoundPage(e: unknown): Answer {
  if (isAppError(e) && e.kind === 'not_found') return renderNotFound();
  throw e;
}

/** The page as HTML, and the JSON state its script polls. */
export function payPageRoutes(source: PayPageSource) {
  return {
    /** Without a promise when the model is (loadPayPage): a local ledger's usual page. */
    page(id: string, gzip = false): Answer | Promise<Answer> {
      let model: ReturnType<typeof loadPayPage>;
      try {
        model = loadPayPage(source, id);
      } catch (e) {
        return notFoundPage(e);
      }
      return model instanceof Promise ? model.then((m) => renderPayPage(m, gzip), notFoundPage) : renderPayPage(model, gzip);
    },
    /** Not found answers the envelope's "Order not found", like the status endpoint. */
    state(id: string): Promise<PayState> {
      return loadPayState(source, id);
    },
  };
}
