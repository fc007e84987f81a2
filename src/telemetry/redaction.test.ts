import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONTENT_ATTRIBUTE_MAX_CHARS, REDACTED, contentAttribute } from './redaction.ts';

describe('contentAttribute', () => {
  it('redacts unless content is included', () => {
    assert.equal(contentAttribute({ secret: 'sk-123' }, false), REDACTED);
    assert.equal(contentAttribute('prompt text', false), REDACTED);
  });
  it('keeps content as JSON (strings as they are) when included', () => {
    assert.equal(contentAttribute({ b: 1, a: [2] }, true), '{"a":[2],"b":1}');
    assert.equal(contentAttribute('prompt text', true), 'prompt text');
    assert.equal(contentAttribute(undefined, true), 'null');
  });
  it('cuts long content to the bound and says how much was cut', () => {
    const text = contentAttribute('x'.repeat(CONTENT_ATTRIBUTE_MAX_CHARS + 10), true);
    assert.ok(text.startsWith('x'.repeat(CONTENT_ATTRIBUTE_MAX_CHARS)));
    assert.ok(text.endsWith('[cut 10 chars]'));
  });
});
