/**
 * Issue 11, item 5: trajectories are written and read as streams, line by line.
 */
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { jsonlLines, writeJsonlStream } from '../../src/adapters/node/jsonl.ts';
import { JsonlPart, mergeJsonlParts, partFile, removeJsonlParts } from '../../src/adapters/node/jsonl-parts.ts';
import { readJsonl } from '../../src/adapters/node/training-files.ts';

const Row = z.object({ i: z.number() });

describe('JSONL streams', () => {
  it('reads line by line: a malformed line is reported with its number and the rest is kept', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-jsonl-'));
    const file = join(dir, 'rows.jsonl');
    await writeFile(file, '\uFEFF{"i":1}\r\n{"i":2}\n{"i":\n\n{"j":4}\n{"i":5}\n');
    const bad: [number, string][] = [];
    const rows = await readJsonl(file, Row, { onBadLine: (n, m) => bad.push([n, m]) });
    expect(rows).toEqual([{ i: 1 }, { i: 2 }, { i: 5 }]);
    expect(bad.map(([n]) => n)).toEqual([3, 5]);
    expect(bad[0]![1]).toMatch(/^not JSON \(/);
    expect(bad[1]![1]).toBe('i: Invalid input: expected number, received undefined');
    // Without a handler the first bad line ends the read, named by its number.
    await expect(readJsonl(file, Row)).rejects.toThrow(`${file}:3: not JSON (`);
    await expect(readJsonl(join(dir, 'missing.jsonl'), Row)).rejects.toThrow(
      `${join(dir, 'missing.jsonl')}: cannot read (ENOENT)`,
    );
    const lines: number[] = [];
    for await (const l of jsonlLines(file)) lines.push(l.n);
    expect(lines).toEqual([1, 2, 3, 5, 6]);
  });

  it('writes one record per line with back-pressure, never one big string', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-jsonl-'));
    const file = join(dir, 'many.jsonl');
    // 20,000 records of 1 KB: 20 MB through a 16 KB stream buffer.
    const records = Array.from({ length: 20_000 }, (_, i) => ({ i, pad: 'x'.repeat(1000) }));
    await writeJsonlStream(file, records);
    const text = await readFile(file, 'utf8');
    expect(text.length).toBe(records.reduce((n, r) => n + JSON.stringify(r).length + 1, 0));
    const back = await readJsonl(file, z.object({ i: z.number(), pad: z.string() }));
    expect(back.map((r) => r.i)).toEqual(records.map((r) => r.i));
  });

  it('merges parts written by several writers in a given order, copying byte ranges (multi-byte text, a line over the 1 MiB buffer), and only lines whose place was reported', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-jsonl-'));
    const file = join(dir, 'rows.jsonl');
    const a = new JsonlPart(file, 3);
    const b = new JsonlPart(file, 8);
    const big = 'x'.repeat(1_500_000);
    const places = [
      a.append({ t: 2, s: '二' }),
      b.append({ t: 0, s: 'é' }),
      a.append({ t: 1, big }),
      b.append({ t: 3 }),
    ];
    expect(places.map((p) => [p.part, p.start, p.length])).toEqual([
      [3, 0, 18],
      [8, 0, 17],
      [3, 18, 1_500_017],
      [8, 17, 8],
    ]);
    a.close();
    expect(() => a.append({ t: 9 })).toThrow('JSONL part 3 is closed');
    // A line cut short after the last reported place (a run stopped mid-write) is never copied.
    await writeFile(partFile(file, 8), '{"t":0,"s":"é"}\n{"t":3}\n{"t":4,"cut', { flag: 'w' });
    mergeJsonlParts(file, [places[1]!, places[2]!, places[0]!, places[3]!]);
    expect(await readFile(file, 'utf8')).toBe(`{"t":0,"s":"é"}\n{"t":1,"big":"${big}"}\n{"t":2,"s":"二"}\n{"t":3}\n`);
    b.close();
    // A place beyond its part's end is an error naming the part.
    expect(() => mergeJsonlParts(file, [{ part: 8, start: 30, length: 20 }])).toThrow(
      `${partFile(file, 8)}: ends before byte 50`,
    );
    removeJsonlParts(file);
    expect((await readdir(dir)).sort()).toEqual(['rows.jsonl']);
  });

  it('a buffered part writes its lines when the buffer fills, at flush and at close, at the places append gave', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-jsonl-'));
    const file = join(dir, 'rows.jsonl');
    const part = new JsonlPart(file, 1, 32);
    const onDisk = () => readFile(partFile(file, 1), 'utf8');
    const p0 = part.append({ t: 0 }); // 8 bytes, buffered
    const p1 = part.append({ t: 1, s: 'é' }); // 17 bytes: 25 buffered
    expect(await onDisk()).toBe('');
    const p2 = part.append({ t: 2 }); // 25 + 8 > 32: the 25 go first, these 8 wait
    expect(await onDisk()).toBe('{"t":0}\n{"t":1,"s":"é"}\n');
    const long = 'y'.repeat(40);
    const p3 = part.append({ t: 3, long }); // longer than the buffer: written after what waits
    expect(await onDisk()).toBe(`{"t":0}\n{"t":1,"s":"é"}\n{"t":2}\n{"t":3,"long":"${long}"}\n`);
    const p4 = part.append({ t: 4 });
    part.flush();
    part.flush(); // nothing left: no second write
    const p5 = part.append({ t: 5 });
    part.close();
    part.close();
    expect(() => part.append({ t: 6 })).toThrow('JSONL part 1 is closed');
    expect([p0, p1, p2, p3, p4, p5].map((p) => [p.start, p.length])).toEqual([
      [0, 8],
      [8, 17],
      [25, 8],
      [33, 58],
      [91, 8],
      [99, 8],
    ]);
    expect(await onDisk()).toBe(`{"t":0}\n{"t":1,"s":"é"}\n{"t":2}\n{"t":3,"long":"${long}"}\n{"t":4}\n{"t":5}\n`);
    mergeJsonlParts(file, [p5, p3, p0]);
    expect(await readFile(file, 'utf8')).toBe(`{"t":5}\n{"t":3,"long":"${long}"}\n{"t":0}\n`);
  });
});
