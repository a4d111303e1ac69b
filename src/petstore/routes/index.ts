import type { AnyOperation } from '../../lib/http-api/index.ts';
import { cancelOrder } from './cancel-order.ts';
import { completeOrder } from './complete-order.ts';
import { createCategory } from './create-category.ts';
import { createPet } from './create-pet.ts';
import { createWebhookSubscription } from './create-webhook-subscription.ts';
import { deleteCategory } from './delete-category.ts';
import { deletePet } from './delete-pet.ts';
import { deleteWebhookSubscription } from './delete-webhook-subscription.ts';
import { getCategory } from './get-category.ts';
import { getInventory } from './get-inventory.ts';
import { getOrder } from './get-order.ts';
import { getPet } from './get-pet.ts';
import { getWebhookSubscription } from './get-webhook-subscription.ts';
import { createApiKey, listApiKeys, revokeApiKey } from './keys.ts';
import { listCategories } from './list-categories.ts';
import { listInventory } from './list-inventory.ts';
import { listOrders } from './list-orders.ts';
import { listPets } from './list-pets.ts';
import { listWebhookDeliveries } from './list-webhook-deliveries.ts';
import { listWebhookSubscriptions } from './list-webhook-subscriptions.ts';
import { placeOrder } from './place-order.ts';
import { redeliverWebhookMessage } from './redeliver-webhook-message.ts';
import { setStock } from './set-stock.ts';
import type { PetstoreDeps } from './shared.ts';
import { updateCategory } from './update-category.ts';
import { updatePet } from './update-pet.ts';

export type { PetstoreDeps } from './shared.ts';

/**
 * Every Petstore operation, in the order the document lists them, each declaring the codes the
 * guard in front of it can answer: 429 everywhere, 401 and 403 where a key is needed.
 */
export function petstoreOperations(deprecation: PetstoreDeps['deprecation']): AnyOperation<PetstoreDeps>[] {
  return definedOperations(deprecation).map((op) => ({
    ...op,
    errors: [
      ...op.errors,
      ...((op.access ?? 'public') === 'public' ? [] : ['unauthenticated', 'forbidden']),
      'rate_limited',
      'unsupported_version',
      'request_timeout',
    ],
  }));
}

function definedOperations(deprecation: PetstoreDeps['deprecation']): AnyOperation<PetstoreDeps>[] {
  return [
    listPets,
    createPet,
    getPet(deprecation),
    updatePet,
    deletePet,
    listCategories,
    createCategory,
    getCategory,
    updateCategory,
    deleteCategory,
    placeOrder,
    listOrders,
    getOrder,
    completeOrder,
    cancelOrder,
    listInventory,
    getInventory,
    setStock,
    createApiKey,
    listApiKeys,
    revokeApiKey,
    createWebhookSubscription,
    listWebhookSubscriptions,
    getWebhookSubscription,
    deleteWebhookSubscription,
    listWebhookDeliveries,
    redeliverWebhookMessage,
  ];
}
