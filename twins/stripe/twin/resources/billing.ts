/**
 * Billing: subscriptions (items, trials, default payment method, cancel now and at period
 * end), invoices (draft → open → paid, void, uncollectible; lines), invoice items, the
 * invoice preview, and test clocks. Renewals are timed moves on the world clock; a
 * subscription on a test clock renews when its clock is advanced.
 */
import type { Move, Route } from '../../../../sdk/twin/types.js';
import { invoiceItemRoutes } from './invoice_items.js';
import { invoiceRoutes } from './invoices.js';
import { subscriptionMoves, subscriptionRoutes } from './subscriptions.js';
import { testClockMoves, testClockRoutes } from './test_clocks.js';

// The sections are files of their own: subscriptions.ts (and subscription_periods.ts), invoices.ts,
// invoice_items.ts, discounts.ts, test_clocks.ts; billing_shared.ts holds what they share.

export const billingMoves: Record<string, Move> = {
  renew: subscriptionMoves.renew,
  advanceClock: testClockMoves.advanceClock,
  invoiceUpcoming: subscriptionMoves.invoiceUpcoming,
  trialWillEnd: subscriptionMoves.trialWillEnd,
};

export const billingRoutes: Route[] = [...subscriptionRoutes, ...invoiceRoutes, ...invoiceItemRoutes, ...testClockRoutes];
