/**
 * An OpenAPI 3.1 document using what 3.1 adds over 3.0: top-level `webhooks`, `info.summary`, a
 * licence by SPDX `identifier`, JSON Schema 2020-12 types (`type: [..., 'null']`, `const`,
 * `examples`), and a deprecated operation with its sunset date (`x-sunset`).
 */
export const OPENAPI_31_DOCUMENT = {
  openapi: '3.1.1',
  info: {
    title: 'Kennel club',
    summary: 'Breeds and the litters announced to subscribers',
    version: '2.0.0',
    license: { name: 'MIT', identifier: 'MIT' },
  },
  paths: {
    '/breeds': {
      get: {
        operationId: 'listBreeds',
        tags: ['Breeds'],
        summary: 'List breeds',
        responses: {
          '200': {
            description: 'Every breed',
            content: {
              'application/json': {
                schema: { type: 'array', items: { $ref: '#/components/schemas/Breed' } },
              },
            },
          },
        },
      },
    },
    '/breeds/{breedId}': {
      get: {
        operationId: 'getBreed',
        tags: ['Breeds'],
        summary: 'Read a breed',
        deprecated: true,
        'x-sunset': '2027-06-30',
        parameters: [{ name: 'breedId', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: {
          '200': {
            description: 'The breed',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Breed' } } },
          },
        },
      },
    },
  },
  webhooks: {
    litterAnnounced: {
      post: {
        operationId: 'litterAnnounced',
        tags: ['Litters'],
        summary: 'A litter was announced',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['type', 'breed'],
                properties: {
                  type: { const: 'litter.announced' },
                  breed: { $ref: '#/components/schemas/Breed' },
                  puppies: { type: ['integer', 'null'], minimum: 1, examples: [5] },
                },
              },
            },
          },
        },
        responses: { '200': { description: 'Received' } },
      },
    },
  },
  components: {
    schemas: {
      Breed: {
        type: 'object',
        required: ['id', 'name'],
        properties: {
          id: { type: 'integer', examples: [1] },
          name: { type: 'string', examples: ['Beagle'] },
          origin: { type: ['string', 'null'] },
        },
      },
    },
  },
};
