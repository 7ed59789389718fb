/**
 * The few platform globals `src/core` and `domains/` may use, declared by hand for
 * `tsconfig.core.json` (which has no DOM, WebWorker or Node types, so a `window.` or `node:` slip
 * fails `tsc`). Each is a WinterCG common-minimum API (https://min-common-api.proposal.wintercg.org/),
 * present alike in browsers, workers and Node ≥ 20; only the members core uses are declared.
 * Not included by the root tsconfig, which checks the same files with the full DOM and Node types.
 */

/** HTML structured clone (deep copy of plain data). */
declare function structuredClone<T>(value: T): T;

/** A cancellation signal handed in by the caller; core only reads whether it fired. */
interface AbortSignal {
  readonly aborted: boolean;
}

/** UTF-8 encoder (Encoding Standard). */
declare class TextEncoder {
  encode(input?: string): Uint8Array;
}

/** WebCrypto, for SHA-1 (git blob ids) and SHA-256 digests only. */
declare const crypto: {
  readonly subtle: { digest(algorithm: 'SHA-1' | 'SHA-256', data: Uint8Array): Promise<ArrayBuffer> };
};
