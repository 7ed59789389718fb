/**
 * tau2-bench's database fingerprint: `sha256(json.dumps(db.model_dump(), sort_keys=True))` as a
 * hex string (tau2's `DB.get_hash` / `get_db_hash`). Two states are the same for tau2's DB
 * reward exactly when their hashes are equal.
 */
import { pyJsonDumps, type PyJson } from './py-json.ts';

/**
 * Hash a tau2 database document in tau2's way.
 *
 * @param modelDump the document in model form (every field present, e.g.
 *   `exportTau2Db(state, { form: 'model' })`), floats as `PyFloat`.
 * @returns 64 lowercase hex digits. Uses WebCrypto (`crypto.subtle`), present in browsers,
 *   workers and Node ≥ 20.
 */
export async function tau2DbHash(modelDump: PyJson): Promise<string> {
  const bytes = new TextEncoder().encode(pyJsonDumps(modelDump, { sortKeys: true }));
  const digest = await crypto.subtle.digest('SHA-256', bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
