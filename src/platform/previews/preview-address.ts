/**
 * The address of a preview deploy: `<slug>--<deployId>.<platform domain>`, one DNS label under the
 * platform domain, like the project's default address beside it (docs/decisions/previews.md, "Previews: the
 * address"). New slugs cannot contain `--` (projects.ts), so no project's default address has
 * this shape; the few older slugs that do keep their address, which wins over a preview's
 * (src/platform/publishing/routes.ts). The deploy id is unique on the platform, so it alone
 * names the preview; the slug is there for people reading the address.
 */

/** A DNS label holds at most 63 octets (RFC 1035). */
const MAX_LABEL = 63;

/** The label of deploy `deployId`'s preview: the slug cut short when the label would not fit. */
export function previewLabel(slug: string, deployId: number): string {
  const suffix = `--${deployId}`;
  const room = MAX_LABEL - suffix.length;
  // A cut slug must not end in a hyphen, which would run into the separator.
  const kept = slug.length <= room ? slug : slug.slice(0, room).replace(/-+$/, '');
  return `${kept}${suffix}`;
}

export function previewHost(slug: string, deployId: number, platformDomain: string): string {
  return `${previewLabel(slug, deployId)}.${platformDomain}`;
}

const PREVIEW_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?--([1-9][0-9]{0,15})$/;

/**
 * The deploy id a host names if it has a preview address's shape (one label under the platform
 * domain, ending in `--<digits>`), whether or not such a preview exists; else undefined.
 */
export function previewDeployIdOf(host: string, platformDomain: string): number | undefined {
  const suffix = `.${platformDomain}`;
  if (!host.endsWith(suffix)) return undefined;
  const label = host.slice(0, -suffix.length);
  const match = PREVIEW_LABEL.exec(label);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}
