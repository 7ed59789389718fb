/*
 * Switchboard's write log, in C inside the sql.js build (scripts/build-sqljs.sh).
 *
 * Every row an INSERT, UPDATE or DELETE writes to a table of the main schema is recorded by
 * SQLite's preupdate hook as one log entry: the table, the operation, the row before and after
 * (each a JSON array of its values in column order, as SQLite's json_array() gives them) and the
 * rowid. An UPDATE that leaves every column as it was (`IS`, comparing text byte for byte
 * whatever the column's collation) is not recorded. Tables whose names start
 * with `sqlite_` or `_sb_` are not recorded.
 *
 * The log is read through the eponymous virtual table `_sb_write_log(seq, tbl, op, old, new,
 * rid)`, where `seq` numbers the entries from 1. The table takes part in transactions: once a
 * statement of a transaction has written to it (`DELETE FROM _sb_write_log WHERE 0` does, right
 * after BEGIN), a ROLLBACK, a ROLLBACK TO a savepoint, and a statement that fails part-way drop
 * the entries of the writes they undo, so the log holds the writes the database holds. Outside
 * BEGIN … COMMIT, each statement's entries go with its own transaction. A transaction opened by
 * an outermost SAVEPOINT must join too (inside one the table has not joined, a ROLLBACK TO or a
 * failed statement leaves entries behind); a savepoint opened before the join keeps, on ROLLBACK
 * TO, what was logged before the join.
 *
 * A write the log cannot record (a BLOB value, which JSON cannot hold; out of memory) makes every
 * read of the log fail with a message until a rollback undoes it. Known difference from
 * json_array(OLD.c): a row stored before ALTER TABLE … ADD COLUMN c REAL DEFAULT 3 has `3` in its
 * old image, not `3.0` (SQLite hands the default over without the column's affinity). INSERT INTO _sb_write_log (tbl, op,
 * old, new, rid) appends an entry (to carry a log over with a database image).
 *
 * `SELECT _sb_write_log_since(n)` gives the entries after seq n as one JSON text, three items an
 * entry: `[tbl, old, new, …]` (the environment's read of a call's writes: one text value to copy
 * and one JSON.parse instead of three text values and two parses per entry).
 *
 * `SELECT _sb_write_log_capture(0)` stops recording on this connection, `(1)` starts it again
 * (a domain's seed rows are not writes of any episode).
 *
 * It replaces AFTER triggers that inserted the same rows into a table (issue 15 item 2): the
 * triggers' firing, their json_array() calls and the log table's own b-tree inserts were a
 * quarter of a booking-heavy tool call.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3.h"

/* One log entry. Offsets and lengths are into SbLog.text; a length of -1 is SQL NULL. */
typedef struct {
  int tbl, tblLen, old, oldLen, neu, newLen;
  char op; /* 'i', 'u' or 'd' */
  int ridNull;
  sqlite3_int64 rid;
} Entry;

/* Whether a table stores rowids, remembered by its name. */
typedef struct {
  char *name;
  const char *schemaName; /* SQLite's own copy of the name: a table created again has a new one */
  int rowid;
} TableKind;

typedef struct {
  sqlite3 *db;
  char *text; /* the entries' table names and JSON images, back to back */
  int textLen, textCap;
  Entry *entries;
  int count, entryCap;
  int *marks; /* entry count at each open savepoint of the transaction, by savepoint index */
  int markCap;
  int atBegin; /* entry count when the transaction the virtual table joined began */
  int implicitOpen, implicitStart; /* a write outside BEGIN … COMMIT: its statement's first entry */
  int capture;
  int failedAt; /* the entry count when a write could not be recorded; -1: none */
  TableKind *kinds;
  int kindCount, kindCap;
} SbLog;

/* Room for `need` items of `size` bytes; 1 when it cannot be had (the log's sizes are ints). */
static int reserve(void **p, int *cap, long long need, size_t size) {
  if (need <= *cap) return 0;
  if (need > INT_MAX / 2) return 1;
  int c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * size);
  if (!q) return 1;
  *p = q;
  *cap = c;
  return 0;
}

static int append(SbLog *L, const char *s, int len) {
  if (reserve((void **)&L->text, &L->textCap, (long long)L->textLen + len, 1)) return 1;
  memcpy(L->text + L->textLen, s, (size_t)len);
  L->textLen += len;
  return 0;
}

/* Bytes `s` takes as a JSON string, quotes included (json_array()'s escapes: appendValue). */
static long long escapedLength(const unsigned char *s, int len) {
  long long n = len + 2;
  for (int i = 0; i < len; i++)
    if (s[i] < 0x20) n += (s[i] == '\b' || s[i] == '\f' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') ? 1 : 5;
    else if (s[i] == '"' || s[i] == '\\') n += 1;
  return n;
}

/* Write `s` as a JSON string at `o` (escapedLength(s) bytes); returns the end. */
static char *writeEscaped(char *o, const unsigned char *s, int len) {
  static const char hex[] = "0123456789abcdef";
  *o++ = '"';
  for (int i = 0; i < len; i++) {
    unsigned char c = s[i];
    if (c == '"' || c == '\\') {
      *o++ = '\\';
      *o++ = (char)c;
    } else if (c < 0x20) {
      *o++ = '\\';
      switch (c) {
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        default:
          *o++ = 'u';
          *o++ = '0';
          *o++ = '0';
          *o++ = hex[c >> 4];
          *o++ = hex[c & 15];
      }
    } else {
      *o++ = (char)c;
    }
  }
  *o++ = '"';
  return o;
}

/* A value as json_array() writes it, byte for byte; a BLOB, which JSON cannot hold, fails the entry. */
static int appendValue(SbLog *L, sqlite3_value *v) {
  char num[64];
  switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
      sqlite3_snprintf(sizeof num, num, "%lld", sqlite3_value_int64(v));
      return append(L, num, (int)strlen(num));
    case SQLITE_FLOAT:
      /* json_array()'s own format: a decimal point or exponent always, 17 significant digits. */
      sqlite3_snprintf(sizeof num, num, "%!0.17g", sqlite3_value_double(v));
      return append(L, num, (int)strlen(num));
    case SQLITE_TEXT: {
      const unsigned char *s = sqlite3_value_text(v);
      int len = sqlite3_value_bytes(v);
      if (reserve((void **)&L->text, &L->textCap, (long long)L->textLen + escapedLength(s, len), 1)) return 1;
      L->textLen = (int)(writeEscaped(L->text + L->textLen, s, len) - L->text);
      return 0;
    }
    case SQLITE_BLOB:
      return 1;
    default:
      return append(L, "null", 4);
  }
}

typedef int (*ValueAt)(sqlite3 *, int, sqlite3_value **);

static int appendRow(SbLog *L, ValueAt at, int columns, int *off, int *len) {
  *off = L->textLen;
  if (append(L, "[", 1)) return 1;
  for (int i = 0; i < columns; i++) {
    sqlite3_value *v = 0;
    if ((i && append(L, ",", 1)) || at(L->db, i, &v) != SQLITE_OK || appendValue(L, v)) return 1;
  }
  if (append(L, "]", 1)) return 1;
  *len = L->textLen - *off;
  return 0;
}

/* An INTEGER and a REAL are the same number (SQLite compares them exactly, not as doubles). */
static int sameIntReal(sqlite3_int64 i, double r) {
  if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0)) return 0;
  sqlite3_int64 j = (sqlite3_int64)r;
  return j == i && (double)j == r;
}

/* `a IS b` for stored values under the BINARY collation (text and blobs byte for byte). */
static int sameValue(sqlite3_value *a, sqlite3_value *b) {
  int ta = sqlite3_value_type(a), tb = sqlite3_value_type(b);
  if (ta == SQLITE_NULL || tb == SQLITE_NULL) return ta == tb;
  int na = ta == SQLITE_INTEGER || ta == SQLITE_FLOAT, nb = tb == SQLITE_INTEGER || tb == SQLITE_FLOAT;
  if (na || nb) {
    if (!na || !nb) return 0;
    if (ta == SQLITE_INTEGER && tb == SQLITE_INTEGER) return sqlite3_value_int64(a) == sqlite3_value_int64(b);
    if (ta == SQLITE_FLOAT && tb == SQLITE_FLOAT) return sqlite3_value_double(a) == sqlite3_value_double(b);
    return ta == SQLITE_INTEGER ? sameIntReal(sqlite3_value_int64(a), sqlite3_value_double(b))
                                : sameIntReal(sqlite3_value_int64(b), sqlite3_value_double(a));
  }
  if (ta != tb) return 0;
  int la = sqlite3_value_bytes(a), lb = sqlite3_value_bytes(b);
  if (la != lb) return 0;
  if (la == 0) return 1;
  const void *pa = ta == SQLITE_TEXT ? (const void *)sqlite3_value_text(a) : sqlite3_value_blob(a);
  const void *pb = ta == SQLITE_TEXT ? (const void *)sqlite3_value_text(b) : sqlite3_value_blob(b);
  return memcmp(pa, pb, (size_t)la) == 0;
}

/* Whether `name` stores rowids (not WITHOUT ROWID): asked of SQLite once per table name. */
static int hasRowid(SbLog *L, const char *name) {
  int rowid = -1, at = -1;
  for (int i = 0; i < L->kindCount && at < 0; i++)
    if (strcmp(L->kinds[i].name, name) == 0) at = i;
  if (at >= 0 && L->kinds[at].schemaName == name) return L->kinds[at].rowid;
  rowid = sqlite3_table_column_metadata(L->db, "main", name, "_rowid_", 0, 0, 0, 0, 0) == SQLITE_OK;
  if (at >= 0) {
    L->kinds[at].schemaName = name;
    L->kinds[at].rowid = rowid;
    return rowid;
  }
  char *copy = sqlite3_mprintf("%s", name);
  if (copy && !reserve((void **)&L->kinds, &L->kindCap, L->kindCount + 1, sizeof(TableKind))) {
    L->kinds[L->kindCount].name = copy;
    L->kinds[L->kindCount].schemaName = name;
    L->kinds[L->kindCount++].rowid = rowid;
  } else {
    sqlite3_free(copy);
  }
  return rowid;
}

static void recordWrite(void *ctx, sqlite3 *db, int op, const char *zDb, const char *zName, sqlite3_int64 key1,
                        sqlite3_int64 key2) {
  SbLog *L = ctx;
  if (!L->capture || strcmp(zDb, "main") != 0) return;
  if (strncmp(zName, "sqlite_", 7) == 0 || strncmp(zName, "_sb_", 4) == 0) return;
  int columns = sqlite3_preupdate_count(db);
  if (!L->implicitOpen && sqlite3_get_autocommit(db)) {
    L->implicitOpen = 1;
    L->implicitStart = L->count;
  }
  if (op == SQLITE_UPDATE) {
    int same = 1;
    for (int i = 0; i < columns && same; i++) {
      sqlite3_value *a = 0, *b = 0;
      sqlite3_preupdate_old(db, i, &a);
      sqlite3_preupdate_new(db, i, &b);
      same = a && b && sameValue(a, b);
    }
    if (same) return;
  }
  if (reserve((void **)&L->entries, &L->entryCap, L->count + 1, sizeof(Entry))) return;
  int start = L->textLen;
  Entry *e = &L->entries[L->count];
  e->tbl = L->textLen;
  e->tblLen = (int)strlen(zName);
  e->old = e->neu = 0;
  e->oldLen = e->newLen = -1;
  e->op = op == SQLITE_INSERT ? 'i' : op == SQLITE_DELETE ? 'd' : 'u';
  if (append(L, zName, e->tblLen) ||
      (op != SQLITE_INSERT && appendRow(L, sqlite3_preupdate_old, columns, &e->old, &e->oldLen)) ||
      (op != SQLITE_DELETE && appendRow(L, sqlite3_preupdate_new, columns, &e->neu, &e->newLen))) {
    /* Out of memory or a BLOB: the write goes unrecorded and the log says so when read, until
     * a rollback undoes that write. */
    L->textLen = start;
    if (L->failedAt < 0) L->failedAt = L->count;
    return;
  }
  e->ridNull = !hasRowid(L, zName);
  e->rid = op == SQLITE_INSERT ? key2 : key1;
  L->count++;
}

/* What a read of the log says while a write it could not record stands (SbLog.failedAt). */
static const char MISSED_WRITE[] = "the write log missed a write (a BLOB value, or out of memory)";

static void truncateLog(SbLog *L, int count) {
  if (count < 0) return;
  if (L->failedAt >= count) L->failedAt = -1;
  if (count >= L->count) return;
  L->count = count;
  L->textLen = count ? L->entries[count].tbl : 0;
  if (count == 0 && L->textCap > (1 << 20)) {
    /* An episode wrote a lot: give the memory back rather than keep it for the next one. */
    free(L->text);
    L->text = 0;
    L->textCap = 0;
  }
}

/* ---- the virtual table ---- */

typedef struct {
  sqlite3_vtab base;
  SbLog *log;
} LogTable;

typedef struct {
  sqlite3_vtab_cursor base;
  int at;
} LogCursor;

static SbLog *logOf(sqlite3_vtab *t) { return ((LogTable *)t)->log; }

static int logConnect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
  (void)argc, (void)argv, (void)err;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(seq INTEGER, tbl TEXT, op TEXT, old TEXT, new TEXT, rid INTEGER)");
  if (rc != SQLITE_OK) return rc;
  LogTable *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  t->log = aux;
  *out = &t->base;
  return SQLITE_OK;
}

static int logDisconnect(sqlite3_vtab *t) {
  sqlite3_free(t);
  return SQLITE_OK;
}

/* A `seq > ?` constraint starts the scan there; entries come in seq order. */
static int logBestIndex(sqlite3_vtab *t, sqlite3_index_info *info) {
  (void)t;
  int after = -1;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (c->usable && c->iColumn == 0 && c->op == SQLITE_INDEX_CONSTRAINT_GT) after = i;
  }
  if (after >= 0) {
    info->aConstraintUsage[after].argvIndex = 1;
    info->aConstraintUsage[after].omit = 1;
    info->idxNum = 1;
    info->estimatedCost = 10;
  } else {
    info->idxNum = 0;
    info->estimatedCost = 1000;
  }
  if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn == 0 && !info->aOrderBy[0].desc) info->orderByConsumed = 1;
  return SQLITE_OK;
}

static int logOpen(sqlite3_vtab *t, sqlite3_vtab_cursor **out) {
  (void)t;
  LogCursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static int logClose(sqlite3_vtab_cursor *c) {
  sqlite3_free(c);
  return SQLITE_OK;
}

static int logFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr, int argc, sqlite3_value **argv) {
  (void)idxStr;
  LogCursor *c = (LogCursor *)cur;
  SbLog *L = logOf(cur->pVtab);
  if (L->failedAt >= 0) {
    cur->pVtab->zErrMsg = sqlite3_mprintf("%s", MISSED_WRITE);
    return SQLITE_ERROR;
  }
  c->at = 0;
  if (idxNum == 1 && argc == 1) {
    int type = sqlite3_value_numeric_type(argv[0]);
    if (type != SQLITE_INTEGER && type != SQLITE_FLOAT) {
      /* NULL compares to nothing; text and blobs sort after every number. */
      c->at = L->count;
    } else {
      /* seq > x: the first entry after floor(x), entry i having seq i + 1 */
      double after = sqlite3_value_double(argv[0]);
      c->at = after < 0 ? 0 : after >= L->count ? L->count : (int)after;
    }
  }
  return SQLITE_OK;
}

static int logNext(sqlite3_vtab_cursor *cur) {
  ((LogCursor *)cur)->at++;
  return SQLITE_OK;
}

static int logEof(sqlite3_vtab_cursor *cur) { return ((LogCursor *)cur)->at >= logOf(cur->pVtab)->count; }

static void resultText(sqlite3_context *ctx, SbLog *L, int off, int len) {
  if (len < 0) sqlite3_result_null(ctx);
  else sqlite3_result_text(ctx, L->text + off, len, SQLITE_TRANSIENT);
}

static int logColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int column) {
  int at = ((LogCursor *)cur)->at;
  SbLog *L = logOf(cur->pVtab);
  Entry *e = &L->entries[at];
  switch (column) {
    case 0: sqlite3_result_int64(ctx, at + 1); break;
    case 1: resultText(ctx, L, e->tbl, e->tblLen); break;
    case 2: sqlite3_result_text(ctx, e->op == 'i' ? "insert" : e->op == 'd' ? "delete" : "update", -1, SQLITE_STATIC); break;
    case 3: resultText(ctx, L, e->old, e->oldLen); break;
    case 4: resultText(ctx, L, e->neu, e->newLen); break;
    default:
      if (e->ridNull) sqlite3_result_null(ctx);
      else sqlite3_result_int64(ctx, e->rid);
  }
  return SQLITE_OK;
}

static int logRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = ((LogCursor *)cur)->at + 1;
  return SQLITE_OK;
}

static int appendColumn(SbLog *L, sqlite3_value *v, int *off, int *len) {
  if (sqlite3_value_type(v) == SQLITE_NULL) {
    *off = 0;
    *len = -1;
    return 0;
  }
  const unsigned char *s = sqlite3_value_text(v);
  *off = L->textLen;
  *len = sqlite3_value_bytes(v);
  return s ? append(L, (const char *)s, *len) : 1;
}

/* INSERT appends an entry (seq, when given, must be the next one); rows cannot be changed or deleted. */
static int logUpdate(sqlite3_vtab *t, int argc, sqlite3_value **argv, sqlite3_int64 *rowid) {
  SbLog *L = logOf(t);
  if (argc == 1 || sqlite3_value_type(argv[0]) != SQLITE_NULL) {
    t->zErrMsg = sqlite3_mprintf("the write log's entries cannot be changed or deleted");
    return SQLITE_CONSTRAINT;
  }
  /* argv: old rowid, new rowid, then seq, tbl, op, old, new, rid */
  sqlite3_value *seq = argv[2], *tbl = argv[3], *op = argv[4], *rid = argv[7];
  if (sqlite3_value_type(seq) != SQLITE_NULL && sqlite3_value_int64(seq) != L->count + 1) {
    t->zErrMsg = sqlite3_mprintf("the write log's next seq is %d", L->count + 1);
    return SQLITE_CONSTRAINT;
  }
  const char *opText = (const char *)sqlite3_value_text(op);
  char kind = !opText ? 0 : strcmp(opText, "insert") == 0 ? 'i' : strcmp(opText, "update") == 0 ? 'u' : strcmp(opText, "delete") == 0 ? 'd' : 0;
  if (sqlite3_value_type(tbl) != SQLITE_TEXT || !kind) {
    t->zErrMsg = sqlite3_mprintf("a write log entry needs a table name and an op of insert, update or delete");
    return SQLITE_CONSTRAINT;
  }
  if (reserve((void **)&L->entries, &L->entryCap, L->count + 1, sizeof(Entry))) return SQLITE_NOMEM;
  int start = L->textLen;
  Entry *e = &L->entries[L->count];
  e->op = kind;
  if (appendColumn(L, tbl, &e->tbl, &e->tblLen) || appendColumn(L, argv[5], &e->old, &e->oldLen) ||
      appendColumn(L, argv[6], &e->neu, &e->newLen)) {
    L->textLen = start;
    return SQLITE_NOMEM;
  }
  e->ridNull = sqlite3_value_type(rid) == SQLITE_NULL;
  e->rid = e->ridNull ? 0 : sqlite3_value_int64(rid);
  *rowid = ++L->count;
  return SQLITE_OK;
}

/* Joining: savepoints opened before the join get the join's count, so a ROLLBACK TO one of them
 * keeps what was logged before (SQLite announces only the innermost open savepoint on joining). */
static int logBegin(sqlite3_vtab *t) {
  SbLog *L = logOf(t);
  L->atBegin = L->count;
  for (int i = 0; i < L->markCap; i++) L->marks[i] = L->count;
  return SQLITE_OK;
}

static int logSync(sqlite3_vtab *t) {
  (void)t;
  return SQLITE_OK;
}

static int logCommit(sqlite3_vtab *t) {
  (void)t;
  return SQLITE_OK;
}

static int logRollback(sqlite3_vtab *t) {
  SbLog *L = logOf(t);
  truncateLog(L, L->atBegin);
  return SQLITE_OK;
}

static int logSavepoint(sqlite3_vtab *t, int i) {
  SbLog *L = logOf(t);
  if (i < 0) return SQLITE_OK;
  if (reserve((void **)&L->marks, &L->markCap, i + 1, sizeof(int))) return SQLITE_NOMEM;
  L->marks[i] = L->count;
  return SQLITE_OK;
}

static int logRelease(sqlite3_vtab *t, int i) {
  (void)t, (void)i;
  return SQLITE_OK;
}

static int logRollbackTo(sqlite3_vtab *t, int i) {
  SbLog *L = logOf(t);
  if (i >= 0 && i < L->markCap) truncateLog(L, L->marks[i]);
  return SQLITE_OK;
}

static sqlite3_module logModule = {
    .iVersion = 2,
    .xCreate = 0, /* eponymous only: no CREATE VIRTUAL TABLE */
    .xConnect = logConnect,
    .xBestIndex = logBestIndex,
    .xDisconnect = logDisconnect,
    .xDestroy = logDisconnect,
    .xOpen = logOpen,
    .xClose = logClose,
    .xFilter = logFilter,
    .xNext = logNext,
    .xEof = logEof,
    .xColumn = logColumn,
    .xRowid = logRowid,
    .xUpdate = logUpdate,
    .xBegin = logBegin,
    .xSync = logSync,
    .xCommit = logCommit,
    .xRollback = logRollback,
    .xSavepoint = logSavepoint,
    .xRelease = logRelease,
    .xRollbackTo = logRollbackTo,
};

static void captureFunction(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  SbLog *L = sqlite3_user_data(ctx);
  L->capture = sqlite3_value_int(argv[0]) != 0;
  sqlite3_result_int(ctx, L->capture);
}

/*
 * `_sb_write_log_since(after)`: the entries after seq `after` (an integer; below 0 reads as 0) as
 * one JSON text, three items an entry: `[tbl, old, new, tbl, old, new, …]` (old and new the JSON
 * row images, null for none), in seq order from seq after + 1. The same entries as reading
 * `tbl, old, new` of `_sb_write_log WHERE seq > after ORDER BY seq`, in one text value: the
 * caller parses it once instead of copying three text values and parsing two images per entry.
 */
static void sinceFunction(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  SbLog *L = sqlite3_user_data(ctx);
  if (L->failedAt >= 0) {
    sqlite3_result_error(ctx, MISSED_WRITE, -1);
    return;
  }
  int type = sqlite3_value_numeric_type(argv[0]);
  if (type != SQLITE_INTEGER) {
    sqlite3_result_error(ctx, "_sb_write_log_since takes an integer seq", -1);
    return;
  }
  sqlite3_int64 after = sqlite3_value_int64(argv[0]);
  int from = after < 0 ? 0 : after >= L->count ? L->count : (int)after;
  long long size = 2;
  for (int i = from; i < L->count; i++) {
    const Entry *e = &L->entries[i];
    size += escapedLength((const unsigned char *)L->text + e->tbl, e->tblLen) + 3 +
            (e->oldLen < 0 ? 4 : e->oldLen) + (e->newLen < 0 ? 4 : e->newLen);
  }
  char *out = sqlite3_malloc64((sqlite3_uint64)size);
  if (!out) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  char *o = out;
  *o++ = '[';
  for (int i = from; i < L->count; i++) {
    const Entry *e = &L->entries[i];
    if (i > from) *o++ = ',';
    o = writeEscaped(o, (const unsigned char *)L->text + e->tbl, e->tblLen);
    *o++ = ',';
    if (e->oldLen < 0) memcpy(o, "null", 4), o += 4;
    else memcpy(o, L->text + e->old, (size_t)e->oldLen), o += e->oldLen;
    *o++ = ',';
    if (e->newLen < 0) memcpy(o, "null", 4), o += 4;
    else memcpy(o, L->text + e->neu, (size_t)e->newLen), o += e->newLen;
  }
  *o++ = ']';
  sqlite3_result_text64(ctx, out, (sqlite3_uint64)(o - out), sqlite3_free, SQLITE_UTF8);
}

/* A statement run outside BEGIN … COMMIT is a transaction of its own, which the virtual table
 * has not joined: SQLite's commit and rollback hooks keep or drop its entries. */
static int onCommit(void *p) {
  ((SbLog *)p)->implicitOpen = 0;
  return 0;
}

static void onRollback(void *p) {
  SbLog *L = p;
  if (L->implicitOpen) truncateLog(L, L->implicitStart);
  L->implicitOpen = 0;
}

static void freeLog(void *p) {
  SbLog *L = p;
  for (int i = 0; i < L->kindCount; i++) sqlite3_free(L->kinds[i].name);
  free(L->kinds);
  free(L->text);
  free(L->entries);
  free(L->marks);
  free(L);
}

/* Give connection `db` its write log. Returns an SQLite result code. */
int sb_write_log_attach(sqlite3 *db) {
  SbLog *L = calloc(1, sizeof *L);
  if (!L) return SQLITE_NOMEM;
  L->db = db;
  L->capture = 1;
  L->failedAt = -1;
  int rc = sqlite3_create_module_v2(db, "_sb_write_log", &logModule, L, freeLog);
  if (rc != SQLITE_OK) return rc;
  rc = sqlite3_create_function_v2(db, "_sb_write_log_capture", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY, L, captureFunction, 0,
                                  0, 0);
  if (rc != SQLITE_OK) return rc;
  rc = sqlite3_create_function_v2(db, "_sb_write_log_since", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY, L, sinceFunction, 0, 0,
                                  0);
  if (rc != SQLITE_OK) return rc;
  sqlite3_preupdate_hook(db, recordWrite, L);
  sqlite3_commit_hook(db, onCommit, L);
  sqlite3_rollback_hook(db, onRollback, L);
  return SQLITE_OK;
}
