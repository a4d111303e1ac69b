import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, defineErrorCatalog } from '../../src/lib/api-error.ts';

describe('ApiError', () => {
  const catalog = defineErrorCatalog({
    pet_not_found: { status: 404, meaning: 'No pet has this id.' },
    database_unavailable: { status: 503, meaning: 'The database did not answer.' },
  });

  it('a refusal (below 500) carries no stack frames; a server error keeps them for the log', () => {
    const refusal = catalog.error('pet_not_found', 'No pet 7.');
    assert.ok(refusal instanceof ApiError);
    assert.deepEqual(refusal.toBody(), { code: 'pet_not_found', message: 'No pet 7.', status: 404 });
    assert.doesNotMatch(refusal.stack ?? '', /\n\s+at /);

    const fault = catalog.error('database_unavailable', 'Try again.', { cause: new Error('ECONNREFUSED') });
    assert.match(fault.stack ?? '', /\n\s+at /);
    assert.equal((fault.cause as Error).message, 'ECONNREFUSED');
  });

  it('leaves Error.stackTraceLimit as it found it', () => {
    const before = Error.stackTraceLimit;
    catalog.error('pet_not_found', 'No pet 7.');
    assert.equal(Error.stackTraceLimit, before);
    assert.match(new Error('after').stack ?? '', /\n\s+at /);
  });
});
