// Asserts an API error response: the status, the stable error code, and that the registry agrees on
// the status.
import assert from 'node:assert/strict';
import { ERROR_CODES } from '../../src/domain/error-codes.ts';

export function assertError(
  res: { status: number; body: any },
  status: number,
  code: string,
): void {
  const where = `got ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
  assert.equal(res.status, status, where);
  assert.equal(res.body?.error?.code, code, where);
  assert.equal(typeof res.body.error.message, 'string', where);
  assert.ok(code in ERROR_CODES, `${code} is not a registered error code`);
  assert.equal(
    ERROR_CODES[code as keyof typeof ERROR_CODES].status,
    status,
    `registry status of ${code}`,
  );
}
