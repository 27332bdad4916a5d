/**
 * The SMTP twin: a mail server that keeps what it accepts. Clients reach its SMTP session
 * through the world's stream `smtp` (`{world_api}/streams/smtp`; `kit world attach` points
 * `SMTP_HOST` and `SMTP_PORT` at a loopback listener that pipes to it); the mailbox is read
 * over HTTP at `{world_url}/smtp/messages`. It may import only `sdk/twin/` and this folder.
 */
import { defineTwin } from '../../../sdk/twin/index.js';
import { errorBody } from './errors.js';
import { attachment, clearMessages, deleteMessage, listMessages, rawMessage, retrieveMessage } from './resources/mailbox.js';
import { smtpSession } from './resources/session.js';
import { messagesStore } from './stores.js';

export default defineTwin({
  vendor: 'smtp',
  version: '1.0.0',
  protocol: 'smtp',
  models: {
    // Reached through its stream, not at a vendor's HTTP host.
    hosts: [],
    resources: ['message'],
    endpointEnv: ['SMTP_HOST', 'SMTP_PORT'],
  },
  routes: [
    { name: 'messages.list', match: { method: 'GET', path: '/messages' }, handle: listMessages },
    { name: 'messages.clear', match: { method: 'DELETE', path: '/messages' }, handle: clearMessages },
    { name: 'messages.retrieve', match: { method: 'GET', path: '/messages/:id' }, handle: retrieveMessage },
    { name: 'messages.delete', match: { method: 'DELETE', path: '/messages/:id' }, handle: deleteMessage },
    { name: 'messages.raw', match: { method: 'GET', path: '/messages/:id/raw' }, handle: rawMessage },
    { name: 'messages.attachment', match: { method: 'GET', path: '/messages/:id/attachments/:n' }, handle: attachment },
  ],
  stream: smtpSession,
  stores: { messages: messagesStore },
  errorBody,
});
