/**
 * A message record the twin did not write (brought into the world from elsewhere) is answered
 * with a 500 naming it, never with a message missing its id; emptying the mailbox still works.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openTestWorld, type TestWorld } from '../../../test/helpers/world.js';

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('smtp mailbox: a malformed message record', () => {
  it('answers retrieve and list with a 500 naming it, and DELETE /messages still empties the mailbox', async () => {
    world = await openTestWorld({ vendors: ['smtp'] });
    world.runner.world.append('smtp', {
      cause: { kind: 'system', reason: 'test' },
      writes: [
        { type: 'message', id: 'msg_bad', value: { garbage: true } },
        { type: 'message_by_seq', id: '000000000001', value: { id: 'msg_bad' } },
      ],
    });
    for (const path of ['/smtp/messages/msg_bad', '/smtp/messages']) {
      const res = await world.vendor('GET', path);
      expect(res.status).toBe(500);
      expect(res.json.error).toMatchObject({ code: 'handler_error', message: expect.stringContaining("record of type 'message' and id 'msg_bad' is malformed") });
    }
    expect((await world.vendor('DELETE', '/smtp/messages')).json).toMatchObject({ deleted: 1 });
    expect((await world.vendor('GET', '/smtp/messages')).json).toMatchObject({ data: [] });
  });
});
