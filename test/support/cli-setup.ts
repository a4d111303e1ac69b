import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after } from 'node:test';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { createTeam } from '../../src/platform/accounts/teams.ts';
import type { PlanName } from '../../src/platform/plans.ts';
import type { Dialect } from '../../src/storage/index.ts';
import {
  type CliOptions,
  type CliResult,
  kennel,
  kennelIn,
  startCliServer,
  tempDir,
} from '../cli/harness.ts';
import { seedProject } from './platform.ts';

/**
 * The setups the CLI's tests share (test/cli): what a run printed for a failure message, a user
 * signed in through a config directory of their own, and a team with projects and a token.
 */

/** A run's exit code and output, for assertion messages. */
export const show = (result: CliResult) =>
  `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;

/** A run's stdout, parsed as JSON. */
export const json = <T = Record<string, unknown>>(result: CliResult) => JSON.parse(result.stdout) as T;

/**
 * A CLI user with a config directory of their own, against the server at `url()`: `run(args,
 * options)` runs a command as them (signed in once `login` has run). Called in a describe, the
 * directory is removed after its tests.
 */
export function cliUser(url: () => string) {
  const dir = tempDir();
  after(() => dir.remove());
  /** `options` may be just the input (stdin); its `env` goes on top of the user's. */
  const run = (args: string[], options: string | CliOptions = {}) => {
    const { env, ...rest } = typeof options === 'string' ? { input: options } : options;
    return kennel(args, { ...rest, env: { KENNEL_URL: url(), KENNEL_CONFIG_DIR: dir.path, ...env } });
  };
  return {
    path: dir.path,
    run,
    /** `kennel login --password-stdin` as `user` (exit 0, or the test fails). */
    async login(user: { email: string; password: string }) {
      const login = await run(['login', '--email', user.email, '--password-stdin'], `${user.password}\n`);
      assert.equal(login.code, 0, show(login));
    },
  };
}

/** A temporary directory (a config dir, files to deploy): `file(name, text)` writes one and returns its path. */
export function scratchDir(prefix?: string) {
  const dir = tempDir(prefix);
  return {
    path: dir.path,
    file(name: string, text: string) {
      const path = join(dir.path, name);
      writeFileSync(path, text);
      return path;
    },
    remove: () => dir.remove(),
  };
}

/**
 * The management API (startCliServer, with `env`) and the owner's team "Shop" (on `plan`) with
 * `projects` (origin http://127.0.0.1:1 unless given; deployed with `document` when one is
 * given): `kennel(...argv)` runs as the owner with an API token, its config
 * directory `files`, where `file(name, text)` writes a file to deploy or apply.
 */
export async function startCliTeam(
  dialect: Dialect,
  {
    env = {},
    plan = 'free',
    projects = [],
    prefix = 'kennel-cli-files-',
  }: {
    env?: Record<string, string>;
    plan?: PlanName;
    projects?: { slug: string; name?: string; originUrl?: string; document?: string | false }[];
    prefix?: string;
  } = {},
) {
  const server = await startCliServer(dialect, env);
  const { ctx } = server.platform;
  const { owner } = server.actors;
  const team = await createTeam(ctx, owner, 'Shop', plan);
  const created = [];
  for (const { slug, name = slug, originUrl = 'http://127.0.0.1:1', document = false } of projects) {
    created.push(
      (await seedProject(ctx, owner, { teamId: team.id, slug, name, originUrl, document })).project,
    );
  }
  const files = scratchDir(prefix);
  const token = (await createToken(ctx, owner, 'cli')).token;
  const cliEnv = { KENNEL_URL: server.url, KENNEL_TOKEN: token, KENNEL_CONFIG_DIR: files.path };
  return {
    server,
    ctx,
    teamId: team.id,
    projects: created,
    token,
    env: cliEnv,
    kennel: kennelIn(cliEnv),
    files,
    file: files.file,
    async close() {
      await server.close();
      files.remove();
    },
  };
}

export type CliTeam = Awaited<ReturnType<typeof startCliTeam>>;
