import type { JsonSchema } from './operation.ts';

const PREFIX = '#/components/schemas/';

/** `{ $ref: '#/components/schemas/Name' }`, the only kind of reference the documents use. */
export function ref(name: string): JsonSchema {
  return { $ref: `${PREFIX}${name}` };
}

/**
 * Replaces component references with the schemas they name (components are not recursive), for
 * the validator and serializer, which compile one operation at a time.
 */
export function inlineRefs(schema: unknown, components: Readonly<Record<string, JsonSchema>>): unknown {
  if (Array.isArray(schema)) return schema.map((item) => inlineRefs(item, components));
  if (schema === null || typeof schema !== 'object') return schema;
  const object = schema as Record<string, unknown>;
  if (typeof object.$ref === 'string') {
    const name = object.$ref.slice(PREFIX.length);
    const target = components[name];
    if (!object.$ref.startsWith(PREFIX) || !target)
      throw new Error(`unknown schema reference ${object.$ref}`);
    return inlineRefs(target, components);
  }
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) copy[key] = inlineRefs(value, components);
  return copy;
}
