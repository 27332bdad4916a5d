/**
 * The Stripe twin: Stripe's v1 API in test mode, as the official SDKs speak it.
 * This file is the twin's entry; it may import only `sdk/twin/` and files of this folder.
 */
import { defineTwin } from '../../../sdk/twin/index.js';
import type { Route } from '../../../sdk/twin/types.js';
import { route } from './lib/call.js';
import { StripeError, errorBody } from './errors.js';
import { accountRoutes } from './resources/account.js';
import { billingMoves, billingRoutes } from './resources/billing.js';
import { catalogRoutes } from './resources/catalog.js';
import { checkoutMoves, checkoutRoutes } from './resources/checkout.js';
import { customerBalanceRoutes } from './resources/customer_balance.js';
import { customerRoutes } from './resources/customers.js';
import { disputeRoutes } from './resources/disputes.js';
import { eventRoutes } from './resources/events.js';
import { legacyRoutes } from './resources/legacy.js';
import { paymentMethodRoutes } from './resources/payment_methods.js';
import { paymentLinkRoutes } from './resources/payment_links.js';
import { paymentMoves, paymentRoutes } from './resources/payments.js';
import { payoutMoves, payoutRoutes } from './resources/payouts.js';
import { promotionRoutes } from './resources/promotions.js';
import { setupIntentRoutes } from './resources/setup_intents.js';
import { taxRoutes } from './resources/tax.js';
import { webhookRoutes } from './resources/webhooks.js';
import { stripeRoot } from './root/index.js';
import { accountListStore, accountsStore, objectsStore } from './stores.js';

/** Stripe answers an unknown URL with 404 invalid_request_error, after checking the key. */
const unknownUrl: Route = route('unrecognized', 'GET', '/*rest', (c) => {
  throw new StripeError(404, 'invalid_request_error',
    `Unrecognized request URL (${c.req.method}: ${c.req.path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`);
});
unknownUrl.match.method = ['GET', 'POST', 'DELETE', 'PUT', 'PATCH'];

export const routes: Route[] = [
  ...customerRoutes,
  ...customerBalanceRoutes,
  ...catalogRoutes,
  ...paymentMethodRoutes,
  ...paymentRoutes,
  ...legacyRoutes,
  ...disputeRoutes,
  ...payoutRoutes,
  ...setupIntentRoutes,
  ...billingRoutes,
  ...taxRoutes,
  ...checkoutRoutes,
  ...paymentLinkRoutes,
  ...promotionRoutes,
  ...webhookRoutes,
  ...eventRoutes,
  ...accountRoutes,
  unknownUrl,
];

export default defineTwin({
  vendor: 'stripe',
  version: '2026-10-28.endive',
  protocol: 'http',
  models: {
    hosts: ['api.stripe.com'],
    resources: [
      'customer', 'product', 'price', 'coupon', 'payment_method', 'payment_intent', 'charge', 'refund',
      'balance_transaction', 'setup_intent', 'event', 'subscription', 'invoice', 'invoiceitem', 'invoice_payment',
      'test_helpers.test_clock', 'discount', 'checkout.session', 'webhook_endpoint', 'promotion_code', 'dispute', 'card', 'token', 'tax_rate', 'customer_balance_transaction', 'payout', 'payment_link',
    ],
    endpointEnv: ['STRIPE_API_BASE'],
  },
  routes,
  stores: { accounts: accountsStore, account_list: accountListStore, objects: objectsStore },
  moves: { ...billingMoves, ...paymentMoves, ...checkoutMoves, ...payoutMoves },
  errorBody,
  // A reader of the world's history never sees an endpoint's whsec_ (webhooks.ts keeps it apart).
  secrets: { webhook_secret: true },
  // A copy of a real account, refreshed from it and fed its webhooks (root/, README "A real account behind the twin").
  root: stripeRoot,
});
