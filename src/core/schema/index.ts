export * from './task.ts';
export * from './trajectory.ts';
export * from './domain.ts';
export * from './policy.ts';
export * from './chat.ts';
