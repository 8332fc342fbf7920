import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cartTotalCents } from '../src/cart.js';
import { toCents } from '../src/money.js';

test('toCents rounds to the nearest cent', () => assert.equal(toCents(0.29), 29));
test('the total counts quantities', () => assert.equal(cartTotalCents([{ price: 0.29, qty: 3 }, { price: 1, qty: 1 }]), 187));
