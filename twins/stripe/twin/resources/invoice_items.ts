/**
 * Invoice items: pending until an invoice takes them (a subscription's next one, or one made
 * with `pending_invoice_items_behavior=include`), or added to a draft, which is rebuilt.
 */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { invalid } from '../errors.js';
import { event, insertWithEvent, updated } from '../lib/events.js';
import { applyMetadata } from '../lib/metadata.js';
import { load, mustLoad, newId, save, unlist } from '../lib/store.js';
import { eq, is, listOf } from '../lib/lists.js';
import { clone, type Obj } from '../lib/util.js';
import { taxRatesParam } from './tax.js';
import { at, clockTime } from './billing_shared.js';
import { MAX_INVOICE_ITEMS, linesOf, refreshDraft } from './invoices.js';

function createInvoiceItem(c: Call): Obj {
  const customerId = c.p.reqStr('customer');
  const customer = mustLoad(c, 'customer', customerId, 'customer', 'customer');
  const cc = at(c, clockTime(c, customer.test_clock));
  const pricing = c.p.obj('pricing');
  const priceId = pricing?.str('price') ?? c.p.str('price');
  const priceData = c.p.obj('price_data');
  let price: Obj | null = null;
  if (priceId !== undefined) price = mustLoad(cc, 'price', priceId, 'price', pricing !== undefined ? 'pricing[price]' : 'price');
  else if (priceData !== undefined && priceData !== null) {
    const product = priceData.reqStr('product');
    mustLoad(cc, 'product', product, 'product', 'price_data[product]');
    price = { id: null, product, unit_amount: priceData.int('unit_amount', 0) ?? 0, currency: priceData.reqStr('currency').toLowerCase() };
  }
  const quantity = c.p.int('quantity', 0) ?? 1;
  let amount: number;
  let cur: string;
  if (price !== null) {
    amount = ((price.unit_amount as number) ?? 0) * quantity;
    cur = price.currency as string;
  } else {
    const a = c.p.int('amount');
    if (a === undefined) throw invalid('You must specify either `amount`, `pricing[price]` or `price_data`.', 'amount', 'parameter_missing');
    amount = a;
    cur = (c.p.str('currency') ?? (customer.currency as string | null) ?? 'usd').toLowerCase();
  }
  const invoiceId = c.p.str('invoice');
  if (invoiceId !== undefined) {
    const inv = mustLoad(cc, 'invoice', invoiceId, 'invoice', 'invoice');
    if (inv.status !== 'draft') throw invalid('You can only add invoice items to draft invoices.', 'invoice', 'invoice_not_editable');
    if (inv.customer !== customerId) throw invalid('The invoice belongs to another customer.', 'invoice');
    const items = linesOf(cc, inv).filter((l) => (l.parent as Obj).type === 'invoice_item_details').length;
    if (items >= MAX_INVOICE_ITEMS) throw invalid(`You can add up to ${MAX_INVOICE_ITEMS} invoice items to an invoice; ${invoiceId} has ${items}.`, 'invoice');
  }
  const subId = c.p.str('subscription');
  if (subId !== undefined) mustLoad(cc, 'subscription', subId, 'subscription', 'subscription');
  const period = c.p.obj('period');
  const ii: Obj = {
    id: newId(cc, 'invoiceitem', 'ii_', 24), object: 'invoiceitem', amount, currency: cur, customer: customerId, customer_account: null,
    date: cc.now, description: c.p.nullableStr('description') ?? null, discountable: c.p.bool('discountable') ?? true,
    discounts: [], invoice: invoiceId ?? null, livemode: false, metadata: applyMetadata(undefined, c.p.get('metadata')),
    net_amount: amount,
    parent: subId === undefined ? null : { subscription_details: { subscription: subId }, type: 'subscription_details' },
    period: period === undefined || period === null ? { end: cc.now, start: cc.now } : { end: period.reqInt('end'), start: period.reqInt('start') },
    pricing: { price_details: price === null || price.id === null ? null : { price: price.id, product: price.product }, type: 'price_details', unit_amount_decimal: quantity === 0 ? '0' : String(amount / quantity) },
    proration: false, quantity, quantity_decimal: String(quantity), tax_rates: taxRatesParam(cc, c.p, 'tax_rates') ?? [], test_clock: customer.test_clock ?? null,
  };
  insertWithEvent(cc, 'invoiceitem', ii, 'invoiceitem.created');
  if (invoiceId !== undefined) refreshDraft(cc, invoiceId);
  return ii;
}

function editableItem(c: Call, id: string): Obj {
  const ii = mustLoad(c, 'invoiceitem', id, 'invoiceitem');
  if (typeof ii.invoice === 'string') {
    const inv = load(c, 'invoice', ii.invoice);
    if (inv !== undefined && inv.status !== 'draft') throw invalid('This invoice item is on a finalized invoice and can no longer be changed.', undefined, 'invoice_not_editable');
  }
  return ii;
}

function updateInvoiceItem(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = editableItem(c, id);
  const ii = clone(before);
  if (c.p.has('description')) ii.description = c.p.nullableStr('description') ?? null;
  if (c.p.has('quantity') || c.p.has('amount')) {
    const q = c.p.int('quantity', 0) ?? (ii.quantity as number);
    const unit = Number(((ii.pricing as Obj).unit_amount_decimal as string) ?? '0');
    ii.quantity = q;
    ii.amount = c.p.int('amount') ?? Math.round(unit * q);
    ii.net_amount = ii.amount;
  }
  ii.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  save(c, 'invoiceitem', ii);
  updated(c, 'invoiceitem.updated', before, ii);
  if (typeof ii.invoice === 'string') refreshDraft(c, ii.invoice);
  return ii;
}

function deleteInvoiceItem(c: Call): Obj {
  const id = c.req.params.id as string;
  const ii = editableItem(c, id);
  unlist(c, 'invoiceitem', id);
  event(c, 'invoiceitem.deleted', ii);
  if (typeof ii.invoice === 'string') refreshDraft(c, ii.invoice);
  return { id, object: 'invoiceitem', deleted: true };
}

export const invoiceItemRoutes: Route[] = [
  route('invoiceitems.create', 'POST', '/v1/invoiceitems', createInvoiceItem),
  route('invoiceitems.list', 'GET', '/v1/invoiceitems', (c) => {
    const pending = c.p.bool('pending');
    return listOf(c, 'invoiceitem', '/v1/invoiceitems', [eq(c, 'customer'), eq(c, 'invoice'),
      pending === undefined ? undefined : (o) => (o.invoice === null) === pending]);
  }),
  route('invoiceitems.retrieve', 'GET', '/v1/invoiceitems/:id', (c) => mustLoad(c, 'invoiceitem', c.req.params.id as string, 'invoiceitem')),
  route('invoiceitems.update', 'POST', '/v1/invoiceitems/:id', updateInvoiceItem),
  route('invoiceitems.del', 'DELETE', '/v1/invoiceitems/:id', deleteInvoiceItem),
];
