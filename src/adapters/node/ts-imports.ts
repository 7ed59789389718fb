/**
 * `import()` of a TypeScript file at run time (a domain folder's `domain.ts`). Under tsx or
 * vitest a loader is already registered. The prebuilt CLI (bin/prebuilt.mjs, marked by
 * `Symbol.for('switchboard.prebuilt')` on globalThis) runs without one, so tsx's loader is
 * registered on the first such import, once.
 */
let registered = false;

/** Make `import()` of `.ts` files work in this thread; a no-op when it already does. */
export async function allowTypeScriptImports(): Promise<void> {
  if (registered || !(globalThis as Record<symbol, unknown>)[Symbol.for('switchboard.prebuilt')]) return;
  const { register } = await import('tsx/esm/api');
  register();
  registered = true;
}
