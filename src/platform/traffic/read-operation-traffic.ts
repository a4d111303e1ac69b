import type { Change } from '../../lib/openapi-diff/index.ts';
import type { PlatformDb } from '../context.ts';
import { reachStartDay } from './read-deprecation-reach.ts';

/**
 * The deploy gate's join with traffic: how many calls, from how many distinct callers, each
 * operation a breaking change names had in the last 7 days (today and the six days before, UTC,
 * as callers are counted per day: docs/traffic.md). Callers past the recorder's cap count as one.
 */
export interface OperationTraffic {
  requests: number;
  callers: number;
}

export interface GateTraffic {
  readonly byOperation: ReadonlyMap<string, OperationTraffic>;
  /** Over all the operations asked about: calls, and distinct callers (one caller of two counts once). */
  readonly total: OperationTraffic;
}

const NONE: OperationTraffic = { requests: 0, callers: 0 };

/** The last 7 days' traffic of `operations` (METHOD /template) of the project. */
export async function readOperationTraffic(
  db: PlatformDb,
  projectId: number,
  operations: readonly string[],
  now: Date,
): Promise<GateTraffic> {
  if (operations.length === 0) return { byOperation: new Map(), total: NONE };
  const recent = db
    .selectFrom('traffic_callers')
    .where('project_id', '=', projectId)
    .where('operation', 'in', [...operations])
    .where('day', '>=', reachStartDay(now));
  const [rows, total] = await Promise.all([
    recent
      .select((eb) => [
        'operation',
        eb.fn.sum<number | string>('requests').as('requests'),
        eb.fn.count<number | string>('caller').distinct().as('callers'),
      ])
      .groupBy('operation')
      .execute(),
    recent
      .select((eb) => [
        eb.fn.sum<number | string>('requests').as('requests'),
        eb.fn.count<number | string>('caller').distinct().as('callers'),
      ])
      .executeTakeFirst(),
  ]);
  return {
    byOperation: new Map(
      rows.map((row) => [row.operation, { requests: Number(row.requests), callers: Number(row.callers) }]),
    ),
    total: { requests: Number(total?.requests ?? 0), callers: Number(total?.callers ?? 0) },
  };
}

/** The operations the breaking changes name. */
export const breakingOperations = (changes: readonly Change[]): string[] => [
  ...new Set(changes.flatMap((c) => (c.level === 'breaking' && c.operation ? [c.operation] : []))),
];

/** The changes with `traffic` on each breaking one that names an operation. */
export function withTraffic(changes: readonly Change[], traffic: GateTraffic): Change[] {
  return changes.map((change) =>
    change.level === 'breaking' && change.operation
      ? { ...change, traffic: traffic.byOperation.get(change.operation) ?? NONE }
      : change,
  );
}

/** `withTraffic` with the project's last 7 days read for the breaking changes among `changes`. */
export async function addTraffic(
  db: PlatformDb,
  projectId: number,
  changes: readonly Change[],
  now: Date,
): Promise<Change[]> {
  const operations = breakingOperations(changes);
  if (operations.length === 0) return [...changes];
  return withTraffic(changes, await readOperationTraffic(db, projectId, operations, now));
}
