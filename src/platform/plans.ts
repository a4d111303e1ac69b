/**
 * Plans and their limits, in one table. Custom domains need Pro or above (seed 001); the limits
 * per project are Kennel's decision (docs/decisions/accounts-and-sign-in.md, "Plans").
 */
export type PlanName = 'free' | 'pro' | 'enterprise';

export interface Plan {
  readonly name: PlanName;
  readonly title: string;
  readonly customDomains: boolean;
  /** Custom domains per project, counting redirect-from domains; removed ones do not count. */
  readonly maxDomainsPerProject: number;
  readonly maxProjects: number;
}

export const PLANS: Readonly<Record<PlanName, Plan>> = {
  free: { name: 'free', title: 'Free', customDomains: false, maxDomainsPerProject: 0, maxProjects: 3 },
  pro: { name: 'pro', title: 'Pro', customDomains: true, maxDomainsPerProject: 10, maxProjects: 20 },
  enterprise: {
    name: 'enterprise',
    title: 'Enterprise',
    customDomains: true,
    maxDomainsPerProject: 100,
    maxProjects: 500,
  },
};

export const PLAN_NAMES: PlanName[] = Object.values(PLANS).map((plan) => plan.name);

export function isPlanName(value: string): value is PlanName {
  return Object.hasOwn(PLANS, value);
}
