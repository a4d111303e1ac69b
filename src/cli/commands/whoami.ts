import type { Me } from '../../platform/api-types.ts';
import { defineCommand } from '../command.ts';
import { credentialsPath } from '../credentials.ts';

export const whoamiCommand = defineCommand({
  name: 'whoami',
  summary: 'Show the signed-in account and the server',
  examples: ['kennel whoami', 'kennel whoami --json'],
  async run(call) {
    const { out, target, io } = call;
    const { body: me } = await call
      .api()
      .shaped<Me>('GET', '/api/v1/me', (b) => typeof b?.email === 'string' && typeof b.isAdmin === 'boolean');
    out.result(me, () => {
      out.line(`${me.email}${me.isAdmin ? ' (platform admin)' : ''}`);
      out.fields([
        [
          'Server',
          `${target.server}${target.serverSource === 'default' ? '' : ` (from ${target.serverSource})`}`,
        ],
        [
          'Token',
          target.tokenSource === 'KENNEL_TOKEN' ? 'from KENNEL_TOKEN' : `saved in ${credentialsPath(io.env)}`,
        ],
      ]);
    });
    return 0;
  },
});
