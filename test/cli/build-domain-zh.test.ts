/**
 * `build-domain --language zh` on a spec whose operationIds are Chinese (`获取书`, `更新书`): each
 * is named from its method and path; MCP tools named `获取书` take their title. The renaming is
 * listed, and the domains gate and run.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { nameFromRoute } from '../../src/core/build-domain/spec-model.ts';
import { capture } from '../fixtures/cli-io.ts';

const SPEC = new URL('../fixtures/specs/zh-books/openapi.json', import.meta.url).pathname;
const MCP = new URL('../fixtures/specs/zh-books/mcp-tools.json', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'sb-build-zh-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('build-domain: operation ids with no ASCII letter', () => {
  it('names a tool from method and path', () => {
    expect(
      [
        ['GET', '/books/{id}'],
        ['post', '/books'],
        ['delete', '/shelves/{shelfId}/books/{bookId}'],
        ['get', '/书/{编号}'],
      ].map(([m, r]) => nameFromRoute(m!, r!)),
    ).toEqual(['get_books_by_id', 'post_books', 'delete_shelves_by_shelf_id_books_by_book_id', 'get']);
  });

  it('builds a Chinese spec: tools get_books_by_id and put_books_by_id, gated, reference 1', async () => {
    const out = join(work, 'library');
    const io = capture();
    expect(
      await main(['build-domain', '--from', SPEC, '--out', out, '--language', 'zh', '--tasks', '2', '--seed', '0'], io),
    ).toBe(0);
    expect(io.stdout).toContain('renamed paths./books/{id}.get.operationId "获取书" to tool get_books_by_id');
    expect(io.stdout).toContain('ACCEPTED: all 2 tasks');
    const report = JSON.parse(readFileSync(join(out, 'build-report.json'), 'utf8'));
    expect(report.renamed).toEqual([
      { path: 'paths./books/{id}.get.operationId', from: '获取书', to: 'get_books_by_id' },
      { path: 'paths./books/{id}.put.operationId', from: '更新书', to: 'put_books_by_id' },
    ]);
    expect(report.tools.map((t: { name: string; kind: string }) => `${t.name} ${t.kind}`)).toEqual([
      'get_books_by_id read',
      'put_books_by_id write',
    ]);
    for (const [agent, mean] of [
      ['reference', 1],
      ['noop', 0],
    ] as const) {
      const run = capture();
      expect(await main(['run', '--domain', out, '--agent', agent, '--json'], run)).toBe(0);
      expect(JSON.parse(run.stdout).tasks.map((t: { mean: number }) => t.mean)).toEqual([mean, mean]);
    }
  });

  it('builds Chinese MCP tools from their titles, keeps the name in the description, skips one without', async () => {
    const out = join(work, 'mcp');
    const io = capture();
    expect(
      await main(['build-domain', '--from', MCP, '--out', out, '--language', 'zh', '--tasks', '2', '--seed', '0'], io),
    ).toBe(0);
    expect(io.stdout).toContain('ACCEPTED: all 2 tasks');
    const report = JSON.parse(readFileSync(join(out, 'build-report.json'), 'utf8'));
    expect(report.renamed).toEqual([
      { path: 'tools[0].name', from: '获取书', to: 'get_book' },
      { path: 'tools[1].name', from: '更新书', to: 'update_book' },
    ]);
    expect(report.skipped).toEqual([
      {
        path: 'tools[2].name',
        reason:
          'tool 删除: its name has no ASCII letter and it has no title with one, so no tool name (give "title", e.g. "Get book")',
      },
    ]);
    const tools = JSON.parse(readFileSync(join(out, 'tools.json'), 'utf8')).tools;
    expect(tools.map((t: { name: string; description: string }) => `${t.name}: ${t.description}`)).toEqual([
      'get_book: 按编号查一本书 (MCP tool "获取书")',
      'update_book: 更新一本书的状态 (MCP tool "更新书")',
    ]);
    const run = capture();
    expect(await main(['run', '--domain', out, '--agent', 'reference', '--json'], run)).toBe(0);
    expect(JSON.parse(run.stdout).tasks.map((t: { mean: number }) => t.mean)).toEqual([1, 1]);
  });
});
