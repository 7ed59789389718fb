export * from './gate.ts';
export * from './communicate-readings.ts';
