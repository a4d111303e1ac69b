import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, stringify } from 'yaml';
import type { CorsPolicy } from '../../lib/cors-policy.ts';
import { parseHostname } from '../../lib/hostname.ts';
import { parseCorsSection, renderCorsSection } from '../projects/cors-config.ts';

/**
 * The YAML domain configuration of seed 001: `domains.primary` and `domains.redirects[]`
 * (`from`, `to`, `status`), plus `domains.names`, Kennel's addition: every custom domain of the
 * project, so that `export` shows them all and `apply --prune` knows what to keep.
 */
export interface DomainConfig {
  names: string[];
  primary: string | null;
  redirects: Redirect[];
  /** The project's CORS policy (`cors:`, projects/cors-config.ts); absent leaves it unchanged. */
  cors?: CorsPolicy;
}

export interface Redirect {
  from: string;
  to: string;
  status: RedirectStatus;
}

export const REDIRECT_STATUSES = [301, 302, 307, 308] as const;
export type RedirectStatus = (typeof REDIRECT_STATUSES)[number];

export interface ConfigProblem {
  line: number;
  column: number;
  path: string;
  message: string;
}

/** What a configuration is checked against: the project's hostnames now. */
export interface ConfigContext {
  /** The project's live custom domains (ASCII). */
  readonly existing: readonly string[];
  /** `<slug>.<platform domain>`: a valid redirect target, never a custom domain. */
  readonly defaultHost: string;
  readonly platformDomain: string;
}

type Parsed = { ok: true; config: DomainConfig } | { ok: false; problems: ConfigProblem[] };

/** Parses and validates a configuration; every problem names its line and column. */
export function parseDomainConfig(text: string, context: ConfigContext): Parsed {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const problems: ConfigProblem[] = [];
  const at = (node: Node | null | undefined, path: string, message: string) => {
    const offset = node?.range?.[0] ?? 0;
    const pos = lines.linePos(offset);
    problems.push({ line: pos.line, column: pos.col, path, message });
  };
  for (const error of doc.errors) {
    const pos = error.linePos?.[0] ?? { line: 1, col: 1 };
    problems.push({
      line: pos.line,
      column: pos.col,
      path: '',
      message: error.message.split('\n')[0] ?? 'invalid YAML',
    });
  }
  if (problems.length > 0) return { ok: false, problems };

  const root = doc.contents;
  if (!isMap(root)) {
    at(root, '', 'The file must be a mapping with a `domains` key.');
    return { ok: false, problems };
  }
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    if (key !== 'domains' && key !== 'cors')
      at(pair.key as Node, key, `Unknown key "${key}": the file has the keys domains and cors.`);
  }
  const corsNode = root.get('cors', true) as Node | undefined;
  const cors = corsNode === undefined ? undefined : parseCorsSection(corsNode, at);
  const domains = root.get('domains', true) as Node | undefined;
  if (!isMap(domains)) {
    at(domains ?? root, 'domains', 'domains must be a mapping with primary, redirects and names.');
    return { ok: false, problems };
  }
  for (const pair of domains.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    if (!['primary', 'redirects', 'names'].includes(key)) {
      at(
        pair.key as Node,
        `domains.${key}`,
        `Unknown key "${key}" under domains: use primary, redirects or names.`,
      );
    }
  }

  const hostname = (node: Node | undefined, path: string, what: string): string | null => {
    if (!isScalar(node) || typeof node.value !== 'string' || node.value.trim() === '') {
      at(node ?? domains, path, `${what} must be a hostname.`);
      return null;
    }
    const parsed = parseHostname(node.value, { platformDomains: [context.platformDomain] });
    if (!parsed.ok) {
      at(node, path, `${what} "${node.value}" is not a valid custom domain: ${parsed.message}`);
      return null;
    }
    return parsed.hostname;
  };

  const names: string[] = [];
  const namesNode = domains.get('names', true) as Node | undefined;
  if (namesNode !== undefined) {
    if (!isSeq(namesNode)) at(namesNode, 'domains.names', 'domains.names must be a list of hostnames.');
    else {
      namesNode.items.forEach((item, i) => {
        const name = hostname(item as Node, `domains.names[${i}]`, 'A name');
        if (name && names.includes(name)) at(item as Node, `domains.names[${i}]`, `${name} is listed twice.`);
        else if (name) names.push(name);
      });
    }
  }
  const known = new Set([...context.existing, ...names]);
  const notOurs = (name: string) =>
    `${name} is not a domain of this project: add it to domains.names (or add the domain) first.`;

  let primary: string | null = null;
  const primaryNode = domains.get('primary', true) as Node | undefined;
  if (primaryNode !== undefined && !(isScalar(primaryNode) && primaryNode.value === null)) {
    primary = hostname(primaryNode, 'domains.primary', 'The primary');
    if (primary && !known.has(primary)) {
      at(primaryNode, 'domains.primary', notOurs(primary));
      primary = null;
    }
  }

  const redirects: Redirect[] = [];
  const redirectNodes: Node[] = [];
  const redirectsNode = domains.get('redirects', true) as Node | undefined;
  if (redirectsNode !== undefined && !(isScalar(redirectsNode) && redirectsNode.value === null)) {
    if (!isSeq(redirectsNode)) at(redirectsNode, 'domains.redirects', 'domains.redirects must be a list.');
    else {
      redirectsNode.items.forEach((item, i) => {
        const path = `domains.redirects[${i}]`;
        if (!isMap(item)) {
          at(item as Node, path, 'Each redirect is a mapping with from, to and status.');
          return;
        }
        for (const pair of item.items) {
          const key = isScalar(pair.key) ? String(pair.key.value) : '';
          if (!['from', 'to', 'status'].includes(key))
            at(pair.key as Node, `${path}.${key}`, `Unknown key "${key}": use from, to and status.`);
        }
        const fromNode = item.get('from', true) as Node | undefined;
        const toNode = item.get('to', true) as Node | undefined;
        const from = hostname(fromNode, `${path}.from`, 'from');
        let to: string | null = null;
        if (
          isScalar(toNode) &&
          typeof toNode.value === 'string' &&
          toNode.value.trim().toLowerCase() === context.defaultHost
        ) {
          to = context.defaultHost;
        } else {
          to = hostname(toNode, `${path}.to`, 'to');
        }
        const statusNode = item.get('status', true) as Node | undefined;
        let status: RedirectStatus = 301;
        if (statusNode !== undefined) {
          const value = isScalar(statusNode) ? statusNode.value : undefined;
          if (!REDIRECT_STATUSES.includes(value as RedirectStatus)) {
            at(
              statusNode,
              `${path}.status`,
              `Unknown redirect status ${JSON.stringify(value ?? null)}: allowed are ${REDIRECT_STATUSES.join(', ')}.`,
            );
          } else status = value as RedirectStatus;
        }
        if (from && !known.has(from)) at(fromNode, `${path}.from`, notOurs(from));
        else if (to && to !== context.defaultHost && !known.has(to)) at(toNode, `${path}.to`, notOurs(to));
        else if (from && to) {
          redirects.push({ from, to, status });
          redirectNodes.push(item);
        }
      });
    }
  }

  // Redirects never chain: a `to` must not itself redirect, and a `from` appears once.
  redirects.forEach((r, i) => {
    const node = redirectNodes[i];
    const path = `domains.redirects[${i}]`;
    const mapNode = isMap(node) ? node : undefined;
    if (r.from === r.to)
      at(mapNode?.get('to', true) as Node, `${path}.to`, `${r.from} redirects to itself: a redirect loop.`);
    else if (redirects.findIndex((o) => o.from === r.from) !== i) {
      at(
        mapNode?.get('from', true) as Node,
        `${path}.from`,
        `${r.from} already redirects; a hostname redirects to one place.`,
      );
    } else if (redirects.some((o) => o.from === r.to)) {
      const loops = redirects.some((o) => o.from === r.to && o.to === r.from);
      at(
        mapNode?.get('to', true) as Node,
        `${path}.to`,
        loops
          ? `${r.from} → ${r.to} → ${r.from} is a redirect loop.`
          : `${r.to} itself redirects, so ${r.from} would chain through it: point ${r.from} at the final hostname.`,
      );
    } else if (primary && r.from === primary) {
      at(
        mapNode?.get('from', true) as Node,
        `${path}.from`,
        `${r.from} is the primary domain; the primary cannot redirect away.`,
      );
    }
  });

  if (problems.length > 0)
    return { ok: false, problems: problems.sort((a, b) => a.line - b.line || a.column - b.column) };
  return { ok: true, config: { names, primary, redirects, ...(cors && { cors }) } };
}

/** Renders a configuration as YAML that `parseDomainConfig` reads back to the same value. */
export function renderDomainConfig(config: DomainConfig): string {
  const domains: Record<string, unknown> = {};
  domains.primary = config.primary;
  domains.redirects = config.redirects.map((r) => ({ from: r.from, to: r.to, status: r.status }));
  domains.names = [...config.names].sort();
  return stringify(
    { domains, ...(config.cors && { cors: renderCorsSection(config.cors) }) },
    { lineWidth: 0 },
  );
}

export function formatProblems(problems: readonly ConfigProblem[]): string {
  return problems
    .map((p) => `line ${p.line}, column ${p.column}${p.path ? ` (${p.path})` : ''}: ${p.message}`)
    .join('\n');
}
