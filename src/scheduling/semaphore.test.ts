import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Semaphore, SemaphoreFullError } from './semaphore.ts';

const never = new AbortController().signal;

describe('Semaphore', () => {
  it('grants permits in FIFO order and ignores a second release', async () => {
    const semaphore = new Semaphore(1, 10);
    const first = await semaphore.acquire(never);
    const order: string[] = [];
    const second = semaphore.acquire(never).then((release) => {
      order.push('second');
      return release;
    });
    const third = semaphore.acquire(never).then((release) => {
      order.push('third');
      return release;
    });
    assert.equal(semaphore.waiting, 2);
    first();
    first();
    (await second)();
    (await third)();
    assert.deepEqual(order, ['second', 'third']);
    assert.equal(semaphore.available, 1);
  });

  it('withdraws an aborted waiter and keeps the queue bounded', async () => {
    const semaphore = new Semaphore(1, 1);
    const held = await semaphore.acquire(never);
    const controller = new AbortController();
    const waiting = semaphore.acquire(controller.signal);
    await assert.rejects(semaphore.acquire(never), SemaphoreFullError);
    controller.abort('gave up');
    await assert.rejects(waiting, (reason) => reason === 'gave up');
    assert.equal(semaphore.waiting, 0);
    held();
    assert.equal(semaphore.available, 1);
  });
});
