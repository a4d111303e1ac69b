import type { ParameterSpec } from '../../lib/http-api/index.ts';
import { petstoreErrors } from '../errors.ts';
import type { WebhookSettings } from '../events/index.ts';
import type { PetstoreDeps } from './shared.ts';

/** The webhook settings, or 503 when this server keeps no sealing key. */
export function webhookSettings(deps: PetstoreDeps): WebhookSettings {
  if (!deps.webhooks) {
    throw petstoreErrors.error(
      'webhooks_unavailable',
      'This Petstore was started without a key to seal webhook signing secrets. Its operator sets PETSTORE_SECRET_KEYS (or gives it a writable DATA_DIR) and restarts it.',
    );
  }
  return deps.webhooks;
}

export const messageIdParam: ParameterSpec = {
  name: 'messageId',
  in: 'path',
  description: 'Identifier of the message (its `webhook-id`)',
  schema: { type: 'string', pattern: '^msg_[A-Za-z0-9_-]{24}$' },
};
