/**
 * What `npm start` prints on the terminal once every listener is up and the "Kennel listening"
 * log line is out: one framed block, so that the first start's credentials are not lost among the
 * JSON log lines (docs/operations.md, "First start"). The secrets in it are shown this once and
 * never logged.
 */
export interface StartBanner {
  /** The dashboard's address, `http://<PLATFORM_DOMAIN>:<port>/`. */
  readonly dashboard: string;
  /** `npm install -g …/cli/kennel-cli.tgz`. */
  readonly cliInstall: string;
  /** The first start's admin and project; absent on later starts. */
  readonly firstStart?: {
    readonly email: string;
    /** Absent when it came from KENNEL_ADMIN_PASSWORD. */
    readonly generatedPassword?: string;
    readonly project: string;
    readonly origin: string;
  };
  /** The Petstore's first admin API key, when this start created it. */
  readonly petstoreKey?: string;
}

const RULE = '─'.repeat(72);

export function startBanner(banner: StartBanner): string {
  const body: string[] = [];
  const { firstStart, petstoreKey } = banner;
  if (firstStart) {
    body.push(
      'Kennel is set up. Sign in with:',
      `  email     ${firstStart.email}`,
      firstStart.generatedPassword
        ? `  password  ${firstStart.generatedPassword}   (shown this once; not stored in clear)`
        : '  password  (from KENNEL_ADMIN_PASSWORD)',
      `The ${firstStart.project} project is deployed (origin ${firstStart.origin}).`,
      '',
    );
  }
  body.push(
    `Open the dashboard in a browser: ${banner.dashboard}`,
    `Install the CLI anywhere: ${banner.cliInstall}`,
  );
  if (petstoreKey) {
    body.push(
      '',
      "The Petstore's first admin API key (every scope; shown this once, stored only as a hash):",
      `  ${petstoreKey}`,
      'Send it as Authorization: Bearer <key>; create narrower keys with kennel keys create.',
    );
  }
  const lines = ['', `┌${RULE}`, ...body.map((line) => (line ? `│ ${line}` : '│')), `└${RULE}`, ''];
  return `${lines.join('\n')}\n`;
}
