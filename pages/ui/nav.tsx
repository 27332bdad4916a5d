/**
 * Moving between the parts of a page: tabs across the top of a panel, a side navigation down
 * the left. Both are given the items and which one is current; an item with `href` is a link
 * (so a person can open it in a new tab), otherwise a button calling `onSelect`.
 */
import type { ComponentChildren } from 'preact';

export interface NavItem {
  id: string;
  label: ComponentChildren;
  /** A number shown beside the label (a list's size); omitted when undefined. */
  count?: number;
  /** A link's address; clicks without a modifier key go to `onSelect` when it is given. */
  href?: string;
}

/** Whether a click should be left to the browser (a new tab or window). */
function modified(e: MouseEvent): boolean {
  return e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey;
}

function Item({ item, current, onSelect, role }: { item: NavItem; current: boolean; onSelect: ((id: string) => void) | undefined; role?: 'tab' }) {
  const body = (
    <>
      {item.label}
      {item.count !== undefined && <span class="nav-count">{item.count}</span>}
    </>
  );
  const props = { role, class: current ? 'current' : undefined, 'aria-current': role === undefined && current ? ('page' as const) : undefined, 'aria-selected': role === 'tab' ? current : undefined };
  if (item.href !== undefined) {
    return (
      <a
        {...props}
        href={item.href}
        onClick={(e) => {
          if (onSelect === undefined || modified(e)) return;
          e.preventDefault();
          onSelect(item.id);
        }}
      >
        {body}
      </a>
    );
  }
  return (
    <button type="button" {...props} onClick={() => onSelect?.(item.id)}>
      {body}
    </button>
  );
}

/** `<Tabs items={[{ id: 'charges', label: 'Charges' }, …]} current="charges" onSelect={setTab} label="Payment" />`. */
export function Tabs({ items, current, onSelect, label }: { items: NavItem[]; current: string; onSelect?: (id: string) => void; label?: string }) {
  return (
    <div class="tabs" role="tablist" aria-label={label}>
      {items.map((item) => (
        <Item key={item.id} item={item} current={item.id === current} onSelect={onSelect} role="tab" />
      ))}
    </div>
  );
}

/** A group of side navigation items under an optional heading. */
export interface NavGroup {
  title?: string;
  items: NavItem[];
}

/** `<SideNav groups={[{ title: 'Payments', items: […] }]} current={section} onSelect={go} label="Sections" />`. */
export function SideNav({ groups, current, onSelect, label }: { groups: NavGroup[]; current: string; onSelect?: (id: string) => void; label?: string }) {
  return (
    <nav class="sidenav" aria-label={label ?? 'Sections'}>
      {groups.map((group, i) => (
        <div class="sidenav-group" key={group.title ?? i}>
          {group.title !== undefined && <p class="sidenav-title">{group.title}</p>}
          <ul>
            {group.items.map((item) => (
              <li key={item.id}>
                <Item item={item} current={item.id === current} onSelect={onSelect} />
              </li>
            ))}
          </ul>
        </div>
      ))}
    </nav>
  );
}
