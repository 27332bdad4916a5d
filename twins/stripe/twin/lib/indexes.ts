/**
 * The equality indexes (INDEXES): which fields of which object types lists, lookups and searches
 * filter on, the versions that added them, and the values an object is filed under. Filing
 * happens on writes (store.ts, `reindex`); reading, in lists.ts.
 */
import { toStorableId } from '../../../../sdk/twin/storable.js';
import { billedSubscription, isObj, type Obj } from './util.js';

/**
 * An equality index: `(by.<type>.<name>.<acct>, <value length>:<value>/<seq as 12 digits>) →
 * the id` for each value an object is filed under, so a list or lookup filtered by its field
 * reads its matches, not every object of the type. The fields lists, lookups and searches
 * filter on that pick a few objects out of many: an app's "find the customer with this
 * email", "this customer's payment intents", "the price with this lookup key", "the order
 * with this metadata id".
 */
export interface Index {
  /** The field a filter names (`Filter.field`). */
  field: string;
  /** Names its entries' tree; the field's name unless two indexes serve the field. */
  name: string;
  /**
   * The first index version (`AccountState.ix`) whose accounts keep it: an account begun
   * before never filed its objects in it, so its filters read every object instead.
   */
  since: number;
  /** The first version whose accounts no longer keep it: another index of the field took its place. */
  until?: number;
  /** What an object is filed under, when not the field as stored (or an expanded object's id). */
  values?(o: Obj): unknown[];
  /**
   * What a filter's value is filed as, when not itself. Such an index may hold more than a
   * filter's matches (every case of an email): what it reads is filtered again.
   */
  key?(value: string): string;
}

const fold = (v: string): string => v.toLowerCase();

const plain = (field: string, since = 1): Index => ({ field, name: field, since });

/**
 * A metadata entry as the metadata index files it: the key as it is, the value in lower case
 * (Stripe's search matches `metadata["key"]:"value"` ignoring the value's case).
 */
export function metadataEntry(key: string, value: string): string {
  return `${key.length}:${key}=${fold(value)}`;
}

const metadata: Index = {
  field: 'metadata', name: 'metadata', since: 3,
  values: (o) => (isObj(o.metadata) ? Object.entries(o.metadata).map(([k, v]) => (typeof v === 'string' ? metadataEntry(k, v) : undefined)) : []),
};

/**
 * Every type's indexes. Metadata is indexed for the searchable types whose search by a
 * metadata value an app might make often (search.ts reads it), at one more stored entry
 * per key on every object made with metadata: not for charges, which copy their payment
 * intent's metadata and would double that cost on every payment; their search walks.
 */
export const INDEXES: Record<string, readonly Index[]> = {
  customer: [
    // Since version 3 filed in lower case, so a search (which ignores case) reads it too; the
    // `email` list filter, which does not, filters what it reads.
    { ...plain('email'), until: 3 },
    { field: 'email', name: 'email_folded', since: 3, values: (o) => [typeof o.email === 'string' ? fold(o.email) : undefined], key: fold },
    metadata,
  ],
  payment_intent: [plain('customer'), metadata],
  charge: [plain('customer'), plain('payment_intent')],
  refund: [plain('charge'), plain('payment_intent')],
  payment_method: [plain('customer')],
  setup_intent: [plain('customer')],
  subscription: [
    plain('customer'), plain('test_clock', 2),
    // A subscription by the ids of its items (they live inside it).
    { field: 'item', name: 'item', since: 2, values: (o) => (isObj(o.items) && Array.isArray(o.items.data) ? o.items.data.map((i) => (isObj(i) ? i.id : undefined)) : []) },
    metadata,
  ],
  invoice: [
    plain('customer'),
    // An invoice by the subscription that billed it (`invoices.list({ subscription })`).
    { field: 'subscription', name: 'subscription', since: 3, values: (o) => [billedSubscription(o)] },
    metadata,
  ],
  invoiceitem: [plain('customer'), plain('invoice', 2)],
  invoice_payment: [plain('invoice', 2)],
  'checkout.session': [plain('customer'), plain('payment_intent', 3), plain('subscription', 3)],
  product: [metadata],
  price: [plain('product'), plain('lookup_key', 2), metadata],
  card: [plain('customer', 2)],
  customer_balance_transaction: [plain('customer', 2)],
  // A promotion code by its code in any case: Stripe's `code` filter and uniqueness check ignore case.
  promotion_code: [{ field: 'code', name: 'code', since: 2, values: (o) => [typeof o.code === 'string' ? fold(o.code) : undefined], key: fold }],
};

/** What a new account gets: it keeps every index. */
export const INDEX_VERSION = 3;

/** Longer values are not indexed (the index id must stay within the tree's id limit): lists by them read every object. */
export const MAX_INDEXED_CHARS = 256;

/** What an equality index files a value under: a string field, or an expanded object's id. */
function indexValue(x: unknown): string | undefined {
  const v = isObj(x) ? x.id : x;
  return typeof v === 'string' && v.length <= MAX_INDEXED_CHARS ? v : undefined;
}

/**
 * The ids of one value's entries sort between `<len>:<value>/` and `<len>:<value>0`; `/` and 12
 * digits follow the stem. What an id that long may not hold is filed as U+FFFD
 * (sdk/twin/storable.ts): values that differ only there share entries, which every reader
 * tests against the object.
 */
export function indexStem(value: string): string {
  const stem = `${value.length}:${value}`;
  return toStorableId(stem, stem.length + 13);
}

/**
 * What `index` files `o` under (nothing for undefined), each value once. A set: a subscription
 * of thousands of items filed each of its prices, and lists made that quadratic (5,000 items: 1.8 s).
 */
export function filedValues(index: Index, o: Obj | undefined): Set<string> {
  const out = new Set<string>();
  if (o === undefined) return out;
  for (const x of index.values === undefined ? [o[index.field]] : index.values(o)) {
    const v = indexValue(x);
    if (v !== undefined) out.add(v);
  }
  return out;
}

/** The index of `type` with computed values for `field`, if it has one (`matching` needs it). */
export function computedIndex(type: string, field: string): Index | undefined {
  return INDEXES[type]?.find((ix) => ix.field === field && ix.values !== undefined);
}

/** Whether `matching(type, field, …)` can be made: `type` has an index with computed values for `field`. */
export function canMatch(type: string, field: string): boolean {
  return computedIndex(type, field) !== undefined;
}
