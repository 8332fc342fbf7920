// joulebench grading guard, preloaded with `node --import` before any task code: freezes node:assert,
// node:assert/strict and node:test so the code under test cannot patch the assertions or the runner.
// Plain JavaScript (not compiled): it must load in any Node the task's tests run under.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const seen = new WeakSet();

/** Freezes an object or function and everything reachable from its own properties (not prototypes of built-ins). */
function deepFreeze(v) {
  if ((typeof v !== 'object' && typeof v !== 'function') || v === null || seen.has(v)) return;
  seen.add(v);
  for (const key of Reflect.ownKeys(v)) {
    const d = Object.getOwnPropertyDescriptor(v, key);
    if (d && 'value' in d) deepFreeze(d.value);
  }
  // A class's instances inherit from its prototype: freeze that too (AssertionError, the test context).
  if (typeof v === 'function' && v.prototype && typeof v.prototype === 'object') deepFreeze(v.prototype);
  Object.freeze(v);
}

for (const id of ['node:assert', 'node:assert/strict', 'node:test']) {
  try {
    deepFreeze(require(id));
  } catch {
    // node:test is missing before Node 18: nothing to freeze.
  }
}
