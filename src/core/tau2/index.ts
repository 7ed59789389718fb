/** tau2-bench compatibility helpers shared by the tau2-airline, tau2-retail and tau2-telecom domains. */
export * from './py-json.ts';
export * from './py-calc.ts';
export * from './common-tools.ts';
export * from './rows.ts';
export * from './db-hash.ts';
export * from './data-manifest.ts';
