export * from './gate.ts';
