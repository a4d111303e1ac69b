import { defineOperation, ref } from '../../lib/http-api/index.ts';
import { petstoreErrors } from '../errors.ts';
import { ifNoneMatchParam, notModifiedResponse, sendTagged } from './etag.ts';
import { idParam, type PetstoreDeps, stringHeader } from './shared.ts';

const day = (date: Date) => date.toISOString().slice(0, 10);

/** The deprecated single read. Its successor is `GET /pets?id={petId}`. */
export function getPet(deprecation: PetstoreDeps['deprecation']) {
  const deprecationHeader = `@${Math.floor(deprecation.deprecatedAt.getTime() / 1000)}`;
  const sunsetHeader = deprecation.sunsetAt.toUTCString();
  const sunsetMs = deprecation.sunsetAt.getTime();
  return defineOperation<PetstoreDeps, { petId: number }>({
    operationId: 'getPet',
    method: 'GET',
    path: '/pets/{petId}',
    tags: ['Pets'],
    access: 'public',
    summary: 'Read a pet (deprecated)',
    description: `Reads one pet. **Deprecated** since ${day(deprecation.deprecatedAt)}, sunset on ${day(deprecation.sunsetAt)}: use \`GET /pets?id={petId}\`, which reads one pet or many in one call. Until the sunset every answer carries \`Deprecation\` (RFC 9745), \`Sunset\` (RFC 8594) and a \`Link\` to the successor (rel="successor-version"); from the sunset date on it answers 410 \`operation_sunset\`.`,
    deprecated: true,
    extensions: { 'x-sunset': day(deprecation.sunsetAt) },
    parameters: [idParam('petId', 'pet'), ifNoneMatchParam],
    responses: {
      200: {
        description: 'The pet',
        schema: ref('Pet'),
        headers: {
          Deprecation: stringHeader('When the operation was deprecated, `@<epoch seconds>` (RFC 9745)'),
          Sunset: stringHeader('When the operation goes away, an HTTP-date (RFC 8594)'),
          Link: stringHeader('The successor operation, rel="successor-version"'),
          ETag: stringHeader('The version of the pet (strong); send it back in If-Match to change it safely'),
        },
      },
      304: notModifiedResponse,
    },
    errors: ['pet_not_found', 'operation_sunset'],
    async handler({ params, headers }, reply, { store, clock }) {
      const successor = `</pets?id=${params.petId}>; rel="successor-version"`;
      if (clock.now().getTime() >= sunsetMs) {
        throw petstoreErrors.error(
          'operation_sunset',
          `GET /pets/{petId} reached its sunset on ${day(deprecation.sunsetAt)} and is gone. Use GET /pets?id=${params.petId} instead.`,
          { headers: { sunset: sunsetHeader, link: successor } },
        );
      }
      const pet = await store.readPet(params.petId);
      reply.header('deprecation', deprecationHeader).header('sunset', sunsetHeader).header('link', successor);
      return sendTagged(reply, headers, 'pet', params.petId, pet);
    },
  });
}
