/**
 * Time is a dependency: code that applies a deadline, a sunset date or a back-off takes a Clock so
 * tests can drive the 30-minute, 48-hour and sunset rules without sleeping.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to; for tests and simulations. */
export class ManualClock implements Clock {
  #ms: number;

  constructor(start: Date | string | number = '2026-01-01T00:00:00Z') {
    this.#ms = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.#ms);
  }

  set(at: Date | string | number): void {
    this.#ms = new Date(at).getTime();
  }

  advance(ms: number): void {
    this.#ms += ms;
  }
}
