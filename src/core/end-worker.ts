import type { Worker } from 'node:worker_threads';

/** How a worker thread ended when it was asked to: by itself, or by Worker.terminate(). */
export type ThreadEnd = 'finished' | 'terminated';

/**
 * Ends a worker thread by asking it to (`ask`: close its ports, so that its event loop empties
 * and it returns), and terminates it only if it has not ended within `graceMs`.
 *
 * Worker.terminate() stops the thread wherever it is. When that is between two calls into a
 * native addon built with C++ exceptions (libsecp256k1's, src/chains/ckd.ts), the next call
 * fails inside node-addon-api, whose attempt to report it fails too in an environment that is
 * stopping; the exception escapes and the whole process aborts (serve exited on SIGABRT, now
 * and then, when stopped right after an order under load). A thread that returns by itself is
 * never inside such a call.
 */
export async function endWorker(worker: Worker, ended: () => boolean, ask: () => void, graceMs = 10_000): Promise<ThreadEnd> {
  if (ended()) return 'finished';
  const exited = new Promise<'finished'>((resolve) => worker.once('exit', () => resolve('finished')));
  ask();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
  const first = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (first === 'finished') return first;
  await worker.terminate();
  return 'terminated';
}
