// The e2e tier starts its files in name order (node --test sorts the glob), two at a time. The least-privilege file
// waits, bounded, for the other files' requests to appear in the audit log, so it must start last: started earlier it
// holds one of the two slots for its whole wait while the remaining files queue behind the other slot.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';

const E2E_DIR = resolve(import.meta.dirname, '../../e2e');
const LAST = 'zz-privileges.test.ts';

describe('e2e file order', () => {
  it('the least-privilege file sorts after every other e2e file', () => {
    const files = readdirSync(E2E_DIR).filter((f) => f.endsWith('.test.ts'));
    assert.ok(files.includes(LAST), `${LAST} exists in test/e2e`);
    const sorted = [...files].sort();
    assert.equal(
      sorted.at(-1),
      LAST,
      `files after ${LAST}: ${sorted.slice(sorted.indexOf(LAST) + 1).join(', ')}`,
    );
  });
});
