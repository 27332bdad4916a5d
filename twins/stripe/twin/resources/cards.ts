/**
 * Stripe's test cards: numbers, `pm_card_*` PaymentMethod tokens and `tok_*` card tokens,
 * and what each does when charged. Numbers and behaviours follow Stripe's testing docs.
 */

export type Behaviour =
  | { kind: 'succeed'; bypassPending?: boolean; dispute?: 'fraudulent' | 'product_not_received' | 'inquiry' }
  /** Declined when charged (and when attached or set up, unless `onlyCharge`). */
  | { kind: 'decline'; code: string; decline_code: string; message: string; onlyCharge?: boolean; param?: string }
  /** Needs 3D Secure on every payment and every setup. */
  | { kind: 'authenticate_always' }
  /** Needs 3D Secure on setup and on-session payments; off-session payments after a setup pass. */
  | { kind: 'authenticate_unless_setup' };

export interface TestCard {
  number: string;
  brand: string;
  funding: 'credit' | 'debit' | 'prepaid';
  country: string;
  behaviour: Behaviour;
}

const ok: Behaviour = { kind: 'succeed' };
const declined = (decline_code: string, message = 'Your card was declined.', onlyCharge = false): Behaviour =>
  ({ kind: 'decline', code: 'card_declined', decline_code, message, onlyCharge });

export const TEST_CARDS: TestCard[] = [
  { number: '4242424242424242', brand: 'visa', funding: 'credit', country: 'US', behaviour: ok },
  { number: '4000056655665556', brand: 'visa', funding: 'debit', country: 'US', behaviour: ok },
  { number: '5555555555554444', brand: 'mastercard', funding: 'credit', country: 'US', behaviour: ok },
  { number: '2223003122003222', brand: 'mastercard', funding: 'credit', country: 'US', behaviour: ok },
  { number: '5200828282828210', brand: 'mastercard', funding: 'debit', country: 'US', behaviour: ok },
  { number: '5105105105105100', brand: 'mastercard', funding: 'prepaid', country: 'US', behaviour: ok },
  { number: '378282246310005', brand: 'amex', funding: 'credit', country: 'US', behaviour: ok },
  { number: '371449635398431', brand: 'amex', funding: 'credit', country: 'US', behaviour: ok },
  { number: '6011111111111117', brand: 'discover', funding: 'credit', country: 'US', behaviour: ok },
  { number: '3056930009020004', brand: 'diners', funding: 'credit', country: 'US', behaviour: ok },
  { number: '3566002020360505', brand: 'jcb', funding: 'credit', country: 'JP', behaviour: ok },
  { number: '6200000000000005', brand: 'unionpay', funding: 'credit', country: 'CN', behaviour: ok },
  { number: '4000000000000077', brand: 'visa', funding: 'credit', country: 'US', behaviour: { kind: 'succeed', bypassPending: true } },
  { number: '4000000000000259', brand: 'visa', funding: 'credit', country: 'US', behaviour: { kind: 'succeed', dispute: 'fraudulent' } },
  { number: '4000000000002685', brand: 'visa', funding: 'credit', country: 'US', behaviour: { kind: 'succeed', dispute: 'product_not_received' } },
  { number: '4000000000001976', brand: 'visa', funding: 'credit', country: 'US', behaviour: { kind: 'succeed', dispute: 'inquiry' } },
  { number: '4000000000000002', brand: 'visa', funding: 'credit', country: 'US', behaviour: declined('generic_decline') },
  { number: '4000000000009995', brand: 'visa', funding: 'credit', country: 'US', behaviour: declined('insufficient_funds', 'Your card has insufficient funds.') },
  { number: '4000000000009987', brand: 'visa', funding: 'credit', country: 'US', behaviour: declined('lost_card') },
  { number: '4000000000009979', brand: 'visa', funding: 'credit', country: 'US', behaviour: declined('stolen_card') },
  { number: '4100000000000019', brand: 'visa', funding: 'credit', country: 'US', behaviour: declined('fraudulent') },
  { number: '4000000000000341', brand: 'visa', funding: 'credit', country: 'US', behaviour: declined('generic_decline', 'Your card was declined.', true) },
  { number: '4000000000000069', brand: 'visa', funding: 'credit', country: 'US', behaviour: { kind: 'decline', code: 'expired_card', decline_code: 'expired_card', message: 'Your card has expired.', param: 'exp_month' } },
  { number: '4000000000000127', brand: 'visa', funding: 'credit', country: 'US', behaviour: { kind: 'decline', code: 'incorrect_cvc', decline_code: 'incorrect_cvc', message: "Your card's security code is incorrect.", param: 'cvc' } },
  { number: '4000000000000119', brand: 'visa', funding: 'credit', country: 'US', behaviour: { kind: 'decline', code: 'processing_error', decline_code: 'processing_error', message: 'An error occurred while processing your card. Try again in a little bit.' } },
  { number: '4000002760003184', brand: 'visa', funding: 'credit', country: 'US', behaviour: { kind: 'authenticate_always' } },
  { number: '4000000000003220', brand: 'visa', funding: 'credit', country: 'US', behaviour: { kind: 'authenticate_always' } },
  { number: '4000000000003063', brand: 'visa', funding: 'credit', country: 'US', behaviour: { kind: 'authenticate_always' } },
  { number: '4000002500003155', brand: 'visa', funding: 'credit', country: 'US', behaviour: { kind: 'authenticate_unless_setup' } },
];

/** `pm_card_*` and `tok_*` names → card numbers. */
const TOKENS: Record<string, string> = {
  visa: '4242424242424242',
  visa_debit: '4000056655665556',
  mastercard: '5555555555554444',
  mastercard_debit: '5200828282828210',
  mastercard_prepaid: '5105105105105100',
  amex: '378282246310005',
  discover: '6011111111111117',
  diners: '3056930009020004',
  jcb: '3566002020360505',
  unionpay: '6200000000000005',
  bypassPending: '4000000000000077',
  createDispute: '4000000000000259',
  createDisputeProductNotReceived: '4000000000002685',
  createDisputeInquiry: '4000000000001976',
  chargeDeclined: '4000000000000002',
  visa_chargeDeclined: '4000000000000002',
  chargeDeclinedInsufficientFunds: '4000000000009995',
  visa_chargeDeclinedInsufficientFunds: '4000000000009995',
  insufficientFunds: '4000000000009995',
  chargeDeclinedLostCard: '4000000000009987',
  visa_chargeDeclinedLostCard: '4000000000009987',
  chargeDeclinedStolenCard: '4000000000009979',
  visa_chargeDeclinedStolenCard: '4000000000009979',
  chargeDeclinedFraudulent: '4100000000000019',
  visa_chargeDeclinedFraudulent: '4100000000000019',
  chargeDeclinedExpiredCard: '4000000000000069',
  visa_chargeDeclinedExpiredCard: '4000000000000069',
  chargeDeclinedIncorrectCvc: '4000000000000127',
  visa_chargeDeclinedIncorrectCvc: '4000000000000127',
  chargeDeclinedProcessingError: '4000000000000119',
  visa_chargeDeclinedProcessingError: '4000000000000119',
  chargeCustomerFail: '4000000000000341',
  visa_chargeCustomerFail: '4000000000000341',
  authenticationRequired: '4000002760003184',
  authenticationRequiredOnSetup: '4000002500003155',
  threeDSecure2Required: '4000000000003220',
  threeDSecureRequired: '4000000000003063',
};

/** The card number a `pm_card_*` or `tok_*` test token stands for. */
export function tokenNumber(token: string): string | undefined {
  const m = /^(?:pm_card|tok)_(.+)$/.exec(token);
  if (m === null) return undefined;
  return TOKENS[m[1] as string];
}

export function luhn(number: string): boolean {
  if (!/^\d{12,19}$/.test(number)) return false;
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let d = number.charCodeAt(number.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function brandOf(number: string): string {
  if (/^4/.test(number)) return 'visa';
  if (/^(5[1-5]|2[2-7])/.test(number)) return 'mastercard';
  if (/^3[47]/.test(number)) return 'amex';
  if (/^6(011|5)/.test(number)) return 'discover';
  if (/^3(0[0-5]|[68])/.test(number)) return 'diners';
  if (/^35/.test(number)) return 'jcb';
  if (/^62/.test(number)) return 'unionpay';
  return 'unknown';
}

/** What a card number is: a listed test card, or any Luhn-valid number (which succeeds). */
export function cardFor(number: string): TestCard {
  const known = TEST_CARDS.find((t) => t.number === number);
  if (known !== undefined) return known;
  return { number, brand: brandOf(number), funding: 'credit', country: 'US', behaviour: ok };
}
