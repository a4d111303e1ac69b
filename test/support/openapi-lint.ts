import { readFileSync } from 'node:fs';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import spectralCore, { type RulesetDefinition } from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import spectralRulesets from '@stoplight/spectral-rulesets';
import { parse } from 'yaml';

/**
 * The two OpenAPI linters people run, through their own libraries (no CLI, nothing fetched), with
 * the rulesets committed at the repository's root: Spectral's `spectral:oas` and Redocly's
 * `recommended`, plus the documented exceptions in `.spectral.yaml` and `redocly.yaml`.
 */

// CommonJS packages: their named exports are reachable only through the default export.
const { Document, Spectral } = spectralCore;
const { Json } = spectralParsers;
const { oas } = spectralRulesets;

const root = new URL('../../', import.meta.url);
const SEVERITIES = ['error', 'warn', 'info', 'hint'];

function spectralRuleset(): RulesetDefinition {
  const file = parse(readFileSync(new URL('.spectral.yaml', root), 'utf8')) as {
    extends: string[];
    rules?: Record<string, 'off' | 'error' | 'warn' | 'info' | 'hint'>;
  };
  // The file names the built-in ruleset as the CLI does; only that one is expected.
  if (JSON.stringify(file.extends) !== JSON.stringify(['spectral:oas'])) {
    throw new Error(`.spectral.yaml extends ${JSON.stringify(file.extends)}, expected ["spectral:oas"]`);
  }
  return { extends: [oas as RulesetDefinition], rules: file.rules ?? {} } as RulesetDefinition;
}

/** Spectral's findings on a document, one line each: `rule severity path: message`. */
export async function spectralFindings(document: Record<string, unknown>, name: string): Promise<string[]> {
  const spectral = new Spectral();
  spectral.setRuleset(spectralRuleset());
  const results = await spectral.run(new Document(JSON.stringify(document, null, 2), Json, name));
  return results.map(
    (r) => `${String(r.code)} ${SEVERITIES[r.severity] ?? r.severity} ${r.path.join('.')}: ${r.message}`,
  );
}

/** Redocly's findings on a document, one line each: `rule severity pointer: message`. */
export async function redoclyFindings(document: Record<string, unknown>, name: string): Promise<string[]> {
  const config = await createConfig(parse(readFileSync(new URL('redocly.yaml', root), 'utf8')));
  const problems = await lintFromString({
    source: JSON.stringify(document, null, 2),
    absoluteRef: `/${name}`,
    config,
  });
  return problems.map((p) => `${p.ruleId} ${p.severity} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
}
