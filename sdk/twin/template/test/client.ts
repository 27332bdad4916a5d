/**
 * A small client of the vendor's API, as an app would use it: the base URL and the API key are
 * all it knows. The tests use it against the world `kit twin test` serves; swap in the vendor's
 * own SDK here when it has one (pointed at `world().twinUrl`, with `world().token` as its key).
 */
import type { Widget } from '../twin/resources/widgets.js';

export type { Widget };

/** An answer that was not 2xx, with the vendor's error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { error?: { type?: string; code?: string; message?: string; param?: string } },
  ) {
    super(`${status} ${body.error?.code ?? ''}: ${body.error?.message ?? JSON.stringify(body)}`);
  }
}

export interface WidgetList {
  object: 'list';
  has_more: boolean;
  data: Widget[];
}

export function client(baseUrl: string, apiKey: string) {
  const send = async <T>(method: string, path: string, params?: Record<string, string | number>): Promise<T> => {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${apiKey}` } };
    if (params !== undefined) {
      // Sent as a form, as many vendors' SDKs do; the twin takes JSON bodies as well.
      init.body = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
    }
    const res = await fetch(`${baseUrl}${path}`, init);
    const body = (await res.json()) as T;
    if (!res.ok) throw new ApiError(res.status, body as ApiError['body']);
    return body;
  };
  return {
    widgets: {
      create: (params: { name: string; activate_in?: number }) => send<Widget>('POST', '/v1/widgets', params),
      retrieve: (id: string) => send<Widget>('GET', `/v1/widgets/${encodeURIComponent(id)}`),
      update: (id: string, params: { name?: string; activate_in?: number }) => send<Widget>('POST', `/v1/widgets/${encodeURIComponent(id)}`, params),
      list: (query: { limit?: number; starting_after?: string } = {}) => {
        const q = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
        return send<WidgetList>('GET', `/v1/widgets${q === '' ? '' : `?${q}`}`);
      },
      del: (id: string) => send<{ id: string; deleted: true }>('DELETE', `/v1/widgets/${encodeURIComponent(id)}`),
    },
  };
}
