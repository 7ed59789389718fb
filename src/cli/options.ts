/** Option parsers shared by the commands. */
import { InvalidArgumentError } from 'commander';

/** Parse a decimal whole-number option in [min, 2^31). */
export function intOption(name: string, min: number) {
  return (value: string): number => {
    const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n >= 2 ** 31) {
      throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${2 ** 31 - 1}`);
    }
    return n;
  };
}

/** Parse an option that takes one of `choices`. */
export function choiceOption<const T extends string>(name: string, choices: readonly T[]) {
  return (value: string): T => {
    if (!(choices as readonly string[]).includes(value)) throw new InvalidArgumentError(`${name} must be one of ${choices.join(', ')}`);
    return value as T;
  };
}
