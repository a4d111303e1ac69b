// @ts-check
import { api } from './api.js';
import { h, replaceChildren } from './dom.js';
import { cardSection, fieldForm } from './widgets.js';

/** @typedef {import('./types.js').Team} Team */
/** @typedef {import('./types.js').Me} Me */

/** The plans of src/platform/plans.ts, in order (the browser test checks they match). */
const PLANS = /** @type {const} */ ([
  { name: 'free', title: 'Free', note: 'no custom domains' },
  { name: 'pro', title: 'Pro', note: 'custom domains' },
  { name: 'enterprise', title: 'Enterprise', note: 'custom domains, higher limits' },
]);

/** @param {string} plan */
const planTitle = (plan) => PLANS.find((p) => p.name === plan)?.title ?? plan;

/**
 * The team's plan: everyone in the team sees it; platform admins change it (Kennel has no
 * billing), everyone else is told whom to ask.
 * @param {{ team: Team, me: Me, ownerNames: string, reloadTeams: () => Promise<void> }} context
 */
export function planSection({ team, me, ownerNames, reloadTeams }) {
  const base = `/api/v1/teams/${team.id}`;
  const current = h('span', { class: 'plan plan-large', 'data-testid': 'plan' }, planTitle(team.plan));
  const section = cardSection(
    'plan',
    'Plan',
    h('p', {}, 'This team is on the ', current, ' plan. Custom domains need Pro or Enterprise.'),
  );
  if (!me.isAdmin) {
    section.append(
      h(
        'p',
        { class: 'muted', 'data-testid': 'plan-who' },
        team.role === 'owner'
          ? 'Plans are set by a platform admin (Kennel has no billing). To change this team’s plan, ask whoever runs this Kennel.'
          : `Plans are set by a platform admin (Kennel has no billing). To change it, ask a team owner — ${ownerNames} — to arrange it with them.`,
      ),
    );
    return section;
  }
  const select = h(
    'select',
    { name: 'plan' },
    PLANS.map((p) =>
      h('option', { value: p.name, selected: p.name === team.plan }, `${p.title} — ${p.note}`),
    ),
  );
  select.value = team.plan;
  const { form } = fieldForm({
    id: 'team-plan',
    label: 'Plan',
    control: select,
    hint: 'As a platform admin you set the plan of any team; it applies to every project of the team at once.',
    submitLabel: 'Change plan',
    busy: 'Changing…',
    async work(done) {
      /** @type {Team} */
      const changed = await api('PUT', `${base}/plan`, { plan: select.value });
      team.plan = changed.plan;
      current.textContent = planTitle(changed.plan);
      replaceChildren(done, `Plan changed to ${planTitle(changed.plan)}.`);
      await reloadTeams().catch(() => {}); // the header catches up on the next load
    },
  });
  section.append(form);
  return section;
}
