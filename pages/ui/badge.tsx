/** Small coloured labels: a status, a scope, a count. */
import type { ComponentChildren } from 'preact';

export type Tone = 'green' | 'red' | 'amber' | 'blue' | 'gray';

/** A label in a tone: `<Badge tone="green">live</Badge>`; gray when no tone is given. */
export function Badge({ tone = 'gray', title, children }: { tone?: Tone; title?: string; children: ComponentChildren }) {
  return (
    <span class={`badge tone-${tone}`} title={title}>
      {children}
    </span>
  );
}

const GREEN = ['succeeded', 'paid', 'active', 'complete', 'completed', 'available', 'open', 'merged', 'delivered', 'enabled', 'live', 'ok', 'success', 'trialing', 'verified', '2xx'];
const RED = ['failed', 'canceled', 'cancelled', 'uncollectible', 'void', 'past_due', 'unpaid', 'disabled', 'error', 'blocked', 'revoked', 'expired', 'lost', 'refused', 'rejected', '5xx'];
const AMBER = ['pending', 'draft', 'incomplete', 'incomplete_expired', 'requires_payment_method', 'requires_action', 'requires_confirmation', 'requires_capture', 'processing', 'paused', 'warning', 'partially_refunded', '4xx'];
const BLUE = ['refunded', 'closed', 'info', 'scheduled', 'frozen', '3xx'];

/** The tone a status word reads as: `succeeded` green, `failed` red, `pending` amber, `refunded` blue, else gray. */
export function toneOf(status: string): Tone {
  const s = status.toLowerCase();
  if (GREEN.includes(s)) return 'green';
  if (RED.includes(s)) return 'red';
  if (AMBER.includes(s)) return 'amber';
  if (BLUE.includes(s)) return 'blue';
  return 'gray';
}

/** A vendor's status word as a badge in its tone, underscores as spaces: `<StatusBadge status="past_due" />` → red "past due". */
export function StatusBadge({ status, tone }: { status: string | null | undefined; tone?: Tone }) {
  if (status === null || status === undefined || status === '') return null;
  return (
    <Badge tone={tone ?? toneOf(status)} title={status}>
      {status.replace(/_/g, ' ')}
    </Badge>
  );
}
