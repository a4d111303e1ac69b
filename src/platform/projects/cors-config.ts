import { isMap, isScalar, isSeq, type Node } from 'yaml';
import { type CorsPolicy, DEFAULT_CORS_POLICY, validateCorsPolicy } from '../../lib/cors-policy.ts';

/**
 * The `cors:` section of a project's YAML configuration (the file `kennel domains export` prints
 * and `apply` reads, src/platform/domains/domain-config.ts): the project's CORS policy with the
 * API's field names. A field left out takes its default; `enabled` defaults to true, since
 * writing the section means wanting it. A file without the section leaves the policy as it is.
 */

const FIELDS = Object.keys(DEFAULT_CORS_POLICY) as (keyof CorsPolicy)[];
const LISTS = ['allowedOrigins', 'allowedMethods', 'allowedHeaders', 'exposeHeaders'] as const;

type At = (node: Node | null | undefined, path: string, message: string) => void;

/** Reads the section; every problem goes to `at` with its node. Undefined when it has problems. */
export function parseCorsSection(node: Node, at: At): CorsPolicy | undefined {
  if (!isMap(node)) {
    at(node, 'cors', `cors must be a mapping with ${FIELDS.join(', ')}.`);
    return undefined;
  }
  let problems = 0;
  const problem: At = (n, path, message) => {
    problems++;
    at(n, path, message);
  };
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    if (!(FIELDS as string[]).includes(key)) {
      problem(pair.key as Node, `cors.${key}`, `Unknown key "${key}" under cors: use ${FIELDS.join(', ')}.`);
    }
  }
  const field = (name: keyof CorsPolicy) => node.get(name, true) as Node | undefined;
  const policy: Record<string, unknown> = { ...DEFAULT_CORS_POLICY, enabled: true };
  for (const name of LISTS) {
    const value = field(name);
    if (value === undefined) continue;
    if (!isSeq(value) || !value.items.every((i) => isScalar(i) && typeof i.value === 'string')) {
      problem(value, `cors.${name}`, `cors.${name} must be a list of strings.`);
      continue;
    }
    policy[name] = value.items.map((i) => String((i as { value: string }).value));
  }
  for (const name of ['enabled', 'allowCredentials'] as const) {
    const value = field(name);
    if (value === undefined) continue;
    if (!isScalar(value) || typeof value.value !== 'boolean') {
      problem(value, `cors.${name}`, `cors.${name} must be true or false.`);
    } else policy[name] = value.value;
  }
  const maxAge = field('maxAgeSeconds');
  if (maxAge !== undefined) {
    if (!isScalar(maxAge) || typeof maxAge.value !== 'number') {
      problem(maxAge, 'cors.maxAgeSeconds', 'cors.maxAgeSeconds must be a number of seconds.');
    } else policy.maxAgeSeconds = maxAge.value;
  }
  if (problems > 0) return undefined;
  const checked = validateCorsPolicy(policy as unknown as CorsPolicy);
  if (checked.ok) return checked.policy;
  for (const p of checked.problems) at(field(p.field) ?? node, `cors.${p.field}`, p.message);
  return undefined;
}

/** The section as `export` prints it: every field, so the file says the whole policy. */
export function renderCorsSection(policy: CorsPolicy): Record<string, unknown> {
  return Object.fromEntries(FIELDS.map((name) => [name, policy[name]]));
}
