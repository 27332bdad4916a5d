/**
 * The customers of the "real" account and of the baseline: the same form for each, so that the
 * copy and the baseline hold the same objects (an email, a name, a description and two
 * metadata values: about 600 bytes of Stripe's customer each).
 */

/** Creates at once while seeding (a burst shares LMDB's group commit, as an app's concurrent creates do). */
export const SEED_IN_FLIGHT = 32;

/** The body of `POST /v1/customers` for the i-th customer. */
export function customerForm(i: number): string {
  return `email=person${i}%40example.com&name=Customer+${i}&description=Seeded+for+the+roots+bench&metadata[n]=${i}&metadata[tier]=${i % 3 === 0 ? 'gold' : 'basic'}`;
}
