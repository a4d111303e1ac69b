import { type ErrorSpec, withStatus } from '../api-error.ts';

/**
 * A catalog's codes as a table by status, each code with what it means:
 * `{ 404: { pet_not_found: '…' }, 409: { … } }`. A status is written once, and a code's status is
 * the group it is listed in.
 */
export type MeaningsByStatus = Readonly<Record<number, Readonly<Record<string, string>>>>;

/** The codes such a table lists. */
export type CodesOf<Table extends MeaningsByStatus> = {
  [Status in keyof Table]: keyof Table[Status] & string;
}[keyof Table];

/** The specs of a table by status, in its order (statuses ascending, as JavaScript orders them). */
export function byStatus<Table extends MeaningsByStatus>(table: Table): Record<CodesOf<Table>, ErrorSpec> {
  return Object.assign(
    {},
    ...Object.entries(table).map(([status, meanings]) => withStatus(Number(status), meanings)),
  );
}
