/**
 * A seeded synthetic database for a {@link SpecModel}: rows per table in foreign-key order, keys
 * from 1001 (integer) or `<prefix>1001` (text), references to existing parent rows, enum values
 * from the enum, dates within ±120 days of the policy clock, and names, e-mails, phone numbers
 * and texts chosen by column name in the domain's language. The same model, seed and clock
 * always give the same rows.
 */
import type { Rng } from '../ports/rng.ts';
import type { ColumnModel, TableModel } from './spec-model.ts';

/** A seed row: column → value (booleans as 0/1). */
export type SeedRow = Record<string, string | number | null>;

const EN_FIRST = [
  'Alice',
  'Ben',
  'Chloe',
  'David',
  'Emma',
  'Frank',
  'Grace',
  'Henry',
  'Isla',
  'Jack',
  'Kate',
  'Leo',
  'Maya',
  'Noah',
  'Olivia',
  'Paul',
];
const EN_LAST = [
  'Smith',
  'Jones',
  'Brown',
  'Taylor',
  'Wilson',
  'Davies',
  'Evans',
  'Thomas',
  'Roberts',
  'Walker',
  'Wright',
  'Hall',
];
const ZH_FAMILY = ['王', '李', '张', '刘', '陈', '杨', '黄', '赵', '吴', '周', '徐', '孙'];
const ZH_GIVEN = ['伟', '芳', '娜', '敏', '静', '磊', '强', '洋', '艳', '勇', '军', '杰', '丽', '涛', '明', '霞'];
const EN_WORDS = [
  'blue',
  'river',
  'quiet',
  'garden',
  'north',
  'silver',
  'maple',
  'harbor',
  'bright',
  'stone',
  'cedar',
  'meadow',
  'amber',
  'falcon',
  'willow',
  'summit',
];
const ZH_WORDS = [
  '春季',
  '北方',
  '花园',
  '银色',
  '港口',
  '安静',
  '明亮',
  '石桥',
  '草原',
  '山顶',
  '清风',
  '湖畔',
  '晨光',
  '青松',
  '白云',
  '长河',
];

/** Rows of one table after another (parents first), by table name. */
export type SyntheticDb = Record<string, SeedRow[]>;

/** Tables ordered so that every referenced table comes before the tables that reference it. */
export function parentFirst(tables: readonly TableModel[]): TableModel[] {
  const out: TableModel[] = [];
  const placed = new Set<string>();
  let rest = [...tables];
  while (rest.length) {
    const ready = rest.filter((t) =>
      t.columns.every((c) => !c.references || c.references === t.name || placed.has(c.references)),
    );
    // A cycle of references: place the first table; its references to later tables stay empty (NULL).
    const next = ready.length ? ready : [rest[0]!];
    for (const t of next) {
      out.push(t);
      placed.add(t.name);
    }
    rest = rest.filter((t) => !placed.has(t.name));
  }
  return out;
}

/** `YYYY-MM-DD` of a time in ms at a UTC offset in minutes. */
function isoDate(ms: number, offsetMin: number): string {
  return new Date(ms + offsetMin * 60_000).toISOString().slice(0, 10);
}

/** `YYYY-MM-DDTHH:MM:SS±HH:MM` of a time in ms at a UTC offset in minutes. */
function isoDateTime(ms: number, offsetMin: number): string {
  const local = new Date(ms + offsetMin * 60_000).toISOString().slice(0, 19);
  const sign = offsetMin < 0 ? '-' : '+';
  const a = Math.abs(offsetMin);
  return `${local}${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

/** Text key prefix of a table: the initials of its noun, upper case (`gist` → `G`). */
export function keyPrefix(t: TableModel): string {
  return t.noun
    .split('_')
    .map((w) => w[0]!.toUpperCase())
    .join('');
}

/** Settings of a value generator. */
export interface ValueContext {
  rng: Rng;
  zh: boolean;
  /** The policy clock, ms since the Unix epoch. */
  now: number;
  /** UTC offset of the policy clock, minutes (480 for China Standard Time). */
  offsetMin: number;
  /** The table holds people (users, customers …): a `name` is a person's name, else words. */
  person?: boolean;
}

/** Table nouns whose rows are people. */
const PERSON = /(user|customer|person|people|owner|member|employee|contact|passenger|patient|client|staff|account)/;

/** A value for `col` of row `i` (not a key or reference). */
export function syntheticValue(col: ColumnModel, i: number, ctx: ValueContext): string | number {
  const { rng, zh } = ctx;
  const n = col.name;
  if (col.enum) return rng.pick(col.enum);
  if (col.type === 'boolean') return rng.int(2);
  const day = 86_400_000;
  const named = (re: RegExp) => !col.format && col.type === 'text' && re.test(n);
  if (col.format === 'date-time' || named(/(_at|_time|timestamp)$/))
    return isoDateTime(ctx.now + (rng.int(241) - 120) * day + rng.int(36) * 900_000 - 9 * 3_600_000, ctx.offsetMin);
  if (col.format === 'date' || named(/(^|_)(date|day)$/))
    return isoDate(ctx.now + (rng.int(241) - 120) * day, ctx.offsetMin);
  if (col.type === 'integer') return /(quantity|count|number|qty|size)/.test(n) ? 1 + rng.int(20) : rng.int(1000);
  if (col.type === 'real') return Math.round(1 + rng.int(99_900)) / 100;
  const first = zh ? rng.pick(ZH_FAMILY) : rng.pick(EN_FIRST);
  const last = zh ? rng.pick(ZH_GIVEN) + (rng.int(2) ? rng.pick(ZH_GIVEN) : '') : rng.pick(EN_LAST);
  const word = () => (zh ? rng.pick(ZH_WORDS) : rng.pick(EN_WORDS));
  if (/email/.test(n))
    return `${rng.pick(EN_FIRST).toLowerCase()}.${rng.pick(EN_LAST).toLowerCase()}${i + 1}@example.com`;
  if (/phone|mobile/.test(n))
    return zh
      ? `1${rng.pick(['3', '5', '8'])}${String(rng.int(1e9)).padStart(9, '0')}`
      : `555-01${String(rng.int(100)).padStart(2, '0')}`;
  if (/^(user_?name|login|owner|username)$/.test(n)) return `${rng.pick(EN_FIRST).toLowerCase()}${1001 + i}`;
  if (/first_name|given/.test(n)) return zh ? last : first;
  if (/last_name|family|surname/.test(n)) return zh ? first : last;
  if (/(^|_)name$/.test(n) || n === 'name') {
    if (ctx.person) return zh ? `${first}${last}` : `${first} ${last}`;
    return zh ? `${word()}${word()}` : `${word()} ${word()}`;
  }
  if (/password|secret|token/.test(n)) return `pw${String(rng.int(1e6)).padStart(6, '0')}`;
  if (/url|link|href/.test(n)) return `https://example.com/${n}/${i + 1}`;
  if (/colou?r/.test(n)) return String(rng.int(0xffffff).toString(16)).padStart(6, '0');
  if (/repo|project|slug|branch/.test(n)) return `${word()}-${word()}`;
  if (/file/.test(n)) return `${word()}_${i + 1}.txt`;
  if (/(description|content|body|text|note|comment|message|summary|title)/.test(n))
    return zh ? `${word()}${word()}的记录` : `${word()} ${word()} notes`;
  return zh ? `${word()}${i + 1}` : `${word()}-${i + 1}`;
}

/**
 * The rows of every table.
 * @param rowsPerTable rows of a table without references (tables with references get twice as many)
 */
export function syntheticDb(
  tables: readonly TableModel[],
  rowsPerTable: number,
  ctx: Omit<ValueContext, 'rng'> & { rng: Rng },
): SyntheticDb {
  const db: SyntheticDb = {};
  for (const t of parentFirst(tables)) {
    const rng = ctx.rng.fork(t.name);
    const child = t.columns.some((c) => c.references && c.references !== t.name);
    const count = child ? rowsPerTable * 2 : rowsPerTable;
    const rows: SeedRow[] = [];
    for (let i = 0; i < count; i++) {
      const row: SeedRow = {};
      for (const c of t.columns) {
        if (t.key.length === 1 && c.name === t.key[0])
          row[c.name] = c.type === 'integer' ? 1001 + i : `${keyPrefix(t)}${1001 + i}`;
        else if (c.references) {
          const parent = db[c.references];
          const pt = tables.find((x) => x.name === c.references)!;
          row[c.name] = parent?.length ? parent[rng.int(parent.length)]![pt.key[0]!]! : null;
        } else row[c.name] = syntheticValue(c, i, { ...ctx, rng, person: PERSON.test(t.noun) });
        // A unique non-key column or the last column of a composite key: made unique by row.
        const last = t.key.length > 1 && c.name === t.key[t.key.length - 1];
        if ((c.unique && !(t.key.length === 1 && c.name === t.key[0])) || last)
          row[c.name] = c.type === 'text' ? `${row[c.name]}-${1001 + i}` : 1001 + i;
      }
      rows.push(row);
    }
    db[t.name] = rows;
  }
  return db;
}
