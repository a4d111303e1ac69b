import { compileOnce, type Dialect, rowsOf, runStepsIn, type Steps } from '../../storage/index.ts';
import { type PetStatus, type StockLevels, statusOf } from '../stock-rules.ts';
import type { PetstoreDb, PetstoreTrx, StoreContext } from './context.ts';

/** A pet's stock levels as a transaction moves them, its row locked since it was read. */
export interface StockLedger {
  stock: number;
  reserved: number;
  status: PetStatus;
  /** The status the row had when read. */
  readonly was: string;
  /** What this transaction moved so far, written by `writeStock`. */
  stockDelta: number;
  reservedDelta: number;
  moves: number;
}

/** The statements of stock moves, compiled once per database (per transaction when given one). */
function stockStatements(db: PetstoreDb, dialect: Dialect) {
  return {
    /** A pet's stock levels, its row locked until the transaction ends (SQLite's writer holds the whole file). */
    lockStock: compileOnce(
      (petId: number) =>
        db
          .selectFrom('inventory')
          .select(['quantity', 'reserved', 'status'])
          .where('pet_id', '=', petId)
          .$if(dialect === 'postgres', (q) => q.forUpdate()),
      [0],
    ),
    /** Moves the levels by deltas; the entry's version moves once per move. Guarded: never below zero. */
    moveStock: compileOnce(
      (stockDelta: number, reservedDelta: number, moves: number, petId: number, guard: number) =>
        db
          .updateTable('inventory')
          .set((eb) => ({
            quantity: eb('quantity', '+', stockDelta),
            reserved: eb('reserved', '+', reservedDelta),
            version: eb('version', '+', moves),
          }))
          .where('pet_id', '=', petId)
          .where((eb) => eb(eb('quantity', '+', guard), '>=', eb.lit(0)))
          .returning('pet_id'),
      [0, 0, 0, 0, 0],
    ),
    ...statusStatements(db),
  };
}
type StockStatements = ReturnType<typeof stockStatements>;

function statusStatements(db: PetstoreDb) {
  return {
    setStatus: compileOnce(
      (status: PetStatus, petId: number) =>
        db.updateTable('inventory').set({ status }).where('pet_id', '=', petId),
      ['available', 0],
    ),
    touchPet: compileOnce(
      (petId: number) =>
        db
          .updateTable('pets')
          .set((eb) => ({ version: eb('version', '+', eb.lit(1)) }))
          .where('id', '=', petId),
      [0],
    ),
  };
}

const compiledStock = new WeakMap<PetstoreDb, StockStatements>();
export function stockStatementsOf(db: PetstoreDb, dialect: Dialect): StockStatements {
  let statements = compiledStock.get(db);
  if (!statements) {
    statements = stockStatements(db, dialect);
    compiledStock.set(db, statements);
  }
  return statements;
}

/** Reads a pet's stock levels and locks its row: undefined when the pet has no entry. */
export function* lockStock(statements: StockStatements, petId: number): Steps<StockLedger | undefined> {
  const [row] = yield* rowsOf(statements.lockStock(petId));
  if (!row) return undefined;
  const status = row.status;
  return {
    stock: row.quantity,
    reserved: row.reserved,
    status,
    was: status,
    stockDelta: 0,
    reservedDelta: 0,
    moves: 0,
  };
}

/**
 * Moves a ledger by one transition's deltas, with the status the state table gives; refused
 * (false, nothing moved) when stock would go below zero.
 */
export function moveLedger(ledger: StockLedger, stockDelta: number, reservedDelta: number): boolean {
  if (ledger.stock + stockDelta < 0 || ledger.reserved + reservedDelta < 0) return false;
  ledger.stock += stockDelta;
  ledger.reserved += reservedDelta;
  ledger.stockDelta += stockDelta;
  ledger.reservedDelta += reservedDelta;
  ledger.moves++;
  ledger.status = statusOf(ledger);
  return true;
}

/** Writes what the ledger moved: the levels in one guarded UPDATE, then the status. */
export function* writeStock(statements: StockStatements, petId: number, ledger: StockLedger): Steps<void> {
  if (ledger.moves === 0) return;
  const { stockDelta, reservedDelta, moves } = ledger;
  const moved = yield* rowsOf(statements.moveStock(stockDelta, reservedDelta, moves, petId, stockDelta));
  // The row is locked since it was read: the guard cannot refuse what the ledger allowed.
  if (moved.length !== 1) throw new Error(`the stock of pet ${petId} changed under its lock`);
  yield* statusSteps(statements, petId, ledger.status, ledger.was);
}

/**
 * Writes a status that differs from `was`. A pet's representation shows that status, so the
 * pet's version moves with it (its ETag changes exactly when what it shows does); the inventory
 * row is locked first, as in every change of both rows.
 */
function* statusSteps(
  statements: ReturnType<typeof statusStatements>,
  petId: number,
  status: PetStatus,
  was: string,
): Steps<void> {
  if (status === was) return;
  yield statements.setStatus(status, petId);
  yield statements.touchPet(petId);
}

/**
 * Moves a pet's stock levels by the given deltas inside `trx` (refused, returning undefined, when
 * stock would go below zero), and writes the status the state table gives. The row stays locked
 * until the transaction ends, so the status written matches the levels.
 */
export function shiftStock(
  ctx: StoreContext,
  trx: PetstoreTrx,
  petId: number,
  stockDelta: number,
  reservedDelta: number,
): Promise<(StockLevels & { status: PetStatus }) | undefined> {
  const statements = stockStatementsOf(ctx.db, ctx.dialect);
  return runStepsIn(
    trx,
    (function* () {
      const ledger = yield* lockStock(statements, petId);
      if (!ledger || !moveLedger(ledger, stockDelta, reservedDelta)) return undefined;
      yield* writeStock(statements, petId, ledger);
      return { stock: ledger.stock, reserved: ledger.reserved, status: ledger.status };
    })(),
  );
}

/** Writes the status the state table gives for new levels, when it differs from `was` (see statusSteps). */
export async function writeStatus(
  trx: PetstoreTrx,
  petId: number,
  levels: StockLevels,
  was: string,
): Promise<StockLevels & { status: PetStatus }> {
  const status = statusOf(levels);
  await runStepsIn(trx, statusSteps(statusStatements(trx), petId, status, was));
  return { ...levels, status };
}
