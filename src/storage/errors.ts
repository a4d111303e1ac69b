/** Recognises constraint violations the same way on both dialects. */
function codeOf(error: unknown): { code?: unknown; errcode?: unknown; message?: unknown } {
  return (error ?? {}) as { code?: unknown; errcode?: unknown; message?: unknown };
}

export function isUniqueViolation(error: unknown): boolean {
  const e = codeOf(error);
  return (
    e.code === '23505' ||
    e.errcode === 2067 ||
    e.errcode === 1555 ||
    /UNIQUE constraint failed/.test(String(e.message))
  );
}

export function isForeignKeyViolation(error: unknown): boolean {
  const e = codeOf(error);
  return e.code === '23503' || e.errcode === 787 || /FOREIGN KEY constraint failed/.test(String(e.message));
}
