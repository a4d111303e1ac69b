import type { PlatformDb } from '../context.ts';
import { previewDeployIdOf, previewHost } from '../previews/preview-address.ts';
import type { InternalIssuer } from './internal-issuer.ts';
import type { IssuedCertificate } from './issuer.ts';

/**
 * Certificates for projects' default addresses (`<slug>.<platform domain>`) and their preview
 * deploys' addresses (`<slug>--<id>.<platform domain>`), from the internal CA,
 * issued when a handshake first asks for one. Only a name that is a published project's default
 * address gets one: a client sending random SNI names makes the edge read the database (one
 * indexed lookup, cached per name by the edge), never mint certificates. Not stored: any node
 * issues its own in a few milliseconds from the shared root, and nothing needs renewing in the
 * database (see docs/decisions/edge-and-certificates.md, "Default addresses: one certificate per name").
 */
export class DefaultAddressCertificates {
  readonly #db: PlatformDb;
  readonly #suffix: string;
  readonly #platformDomain: string;
  readonly #issuer: InternalIssuer;

  constructor(db: PlatformDb, platformDomain: string, issuer: InternalIssuer) {
    this.#db = db;
    this.#suffix = `.${platformDomain}`;
    this.#platformDomain = platformDomain;
    this.#issuer = issuer;
  }

  /** The project slug `host` would be the default address of (one label), or undefined. */
  slugOf(host: string): string | undefined {
    if (!host.endsWith(this.#suffix)) return undefined;
    const label = host.slice(0, -this.#suffix.length);
    return /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label) ? label : undefined;
  }

  /**
   * Whether `host` is the default address of a published project, or the address of a preview
   * deploy (`<slug>--<id>`, src/platform/previews/): what the edge routes.
   */
  async serves(host: string): Promise<boolean> {
    const slug = this.slugOf(host);
    if (slug === undefined) return false;
    const previewId = previewDeployIdOf(host, this.#platformDomain);
    if (previewId !== undefined) {
      const preview = await this.#db
        .selectFrom('deploys')
        .innerJoin('projects', 'projects.id', 'deploys.project_id')
        .select('projects.slug')
        .where('deploys.id', '=', previewId)
        .where('deploys.preview', '=', 1)
        .where('deploys.status', '=', 'succeeded')
        .executeTakeFirst();
      if (preview && previewHost(preview.slug, previewId, this.#platformDomain) === host) return true;
    }
    const row = await this.#db
      .selectFrom('projects')
      .select('id')
      .where('slug', '=', slug)
      .where('active_deploy_id', 'is not', null)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** A new certificate for `host`; call only for a host `serves` said yes to. */
  issue(host: string): Promise<IssuedCertificate> {
    return this.#issuer.issue(host);
  }
}
