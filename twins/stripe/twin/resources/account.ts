/** `GET /v1/account`: the account the key opens (apps often call it to check their key). */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../lib/call.js';
import { DEFAULT_ACCOUNT } from '../lib/auth.js';
import { isObj } from '../lib/util.js';

/** `('root.account', <acct>) →` the account object a root's refresh copied (root/), answered as it is. */
export const COPIED_ACCOUNT_OBJECT = 'root.account';

export const accountRoutes: Route[] = [
  route('accounts.retrieveCurrent', 'GET', '/v1/account', (c) => {
    const copied = c.tree.get<unknown>(COPIED_ACCOUNT_OBJECT, c.acct);
    if (isObj(copied) && copied.id === c.acct) return copied;
    return {
      id: c.acct,
      object: 'account',
      business_profile: { mcc: null, name: null, support_email: null, support_phone: null, support_url: null, url: null },
      business_type: null,
      capabilities: { card_payments: 'active', transfers: 'active' },
      charges_enabled: true,
      controller: { type: 'account' },
      country: 'US',
      created: 0,
      default_currency: 'usd',
      details_submitted: true,
      email: c.acct === DEFAULT_ACCOUNT ? 'world@twinkit.test' : `${c.acct}@twinkit.test`,
      metadata: {},
      payouts_enabled: true,
      settings: { dashboard: { display_name: 'Twinkit test account', timezone: 'Etc/UTC' } },
      type: 'standard',
    };
  }),
];
