import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { Dialect } from '../../src/storage/index.ts';
import { startApiPlatform } from './api-scenario.ts';
import { seedProject } from './platform.ts';

/** A deploy as the management API answers it (the fields the deploy tests read). */
export interface DeployAnswer {
  id: number;
  status: string;
  active: boolean;
  problems: string[];
  sourceFormat: string;
}

/**
 * startApiPlatform, and the owner's project `club` (on the origin http://127.0.0.1:4010, allowed),
 * not yet deployed: `deploy(document)` deploys through the API (201, or the test fails).
 */
export async function startClubApi(dialect: Dialect) {
  const api = await startApiPlatform(dialect, { KENNEL_ORIGIN_ALLOWLIST: 'http://127.0.0.1:4010' });
  await seedProject(api.p.ctx, api.owner, {
    teamId: api.team.id,
    slug: 'club',
    name: 'Kennel club',
    originUrl: 'http://127.0.0.1:4010',
    document: false,
  });
  return {
    ...api,
    async deploy(document: string) {
      const answer = await api.asOwner('POST', '/api/v1/projects/club/deploys', { document });
      assert.equal(answer.status, 201, answer.text);
      return answer.body as unknown as DeployAnswer;
    },
  };
}

export type ClubApi = Awaited<ReturnType<typeof startClubApi>>;

/** For a describe: `club.api` (startClubApi) made before its tests and closed after; `club.deploy`. */
export function clubApiSuite(dialect: Dialect) {
  const club = {
    api: undefined as unknown as ClubApi,
    deploy: (document: string) => club.api.deploy(document),
  };
  before(async () => {
    club.api = await startClubApi(dialect);
  });
  after(() => club.api?.close());
  return club;
}
