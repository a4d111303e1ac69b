/**
 * A state machine as a table (STYLE.md, "State machines as tables"): the rows are data a test
 * walks one by one, and every change of state looks its row up here, so a pair of state and event
 * the table lacks is refused the same way in every machine. The domain lifecycle
 * (domains/lifecycle.ts) and the certificate job (certificates/certificate-states.ts) are two.
 */

export interface TransitionRow<State extends string, Event extends string> {
  readonly from: State;
  readonly event: Event;
  readonly to: State;
  /** What happens beside the state (and, for a job, when its next attempt is). */
  readonly effect: string;
}

/** An event the table has no row for in that state; each machine names its own subclass. */
export class RefusedTransition<State extends string, Event extends string> extends Error {
  readonly from: State;
  readonly event: Event;

  constructor(from: State, event: Event, message: string) {
    super(message);
    this.name = new.target.name;
    this.from = from;
    this.event = event;
  }
}

/** The one row of `table` for `from` and `event`; without one, throws `refused`. */
export function transitionIn<State extends string, Event extends string>(
  table: readonly TransitionRow<State, Event>[],
  from: State,
  event: Event,
  refused: new (from: State, event: Event) => RefusedTransition<State, Event>,
): TransitionRow<State, Event> {
  const row = table.find((t) => t.from === from && t.event === event);
  if (!row) throw new refused(from, event);
  return row;
}
