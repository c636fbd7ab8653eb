// The build's recorded answers as the bin reads them (server/mcp/handshake-answers.ts): anything but the index this code
// writes means no fast start at all (the SDK answers everything), and an answer file that cannot be read is left to
// the SDK too.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readHandshakeAnswers } from '../../server/mcp/handshake-answers.js';

const INDEX = { format: 1, count: 2, legacy: { '2025-11-25': { plain: { initialize: 0 }, apps: { initialize: 1 } } }, modern: {} };

describe('readHandshakeAnswers', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const folder = (files: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'elicitly-answers-'));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return new URL(`${pathToFileURL(dir).href}/`);
  };

  it('reads the index, and each answer when asked', () => {
    const recorded = readHandshakeAnswers(folder({ 'index.json': JSON.stringify(INDEX), '0.json': '["{\\"id\\":", "}"]', '1.json': '[1, 2]' }));
    expect(recorded?.answers).toEqual({ format: 1, legacy: INDEX.legacy, modern: {} });
    expect(recorded?.answer(0)).toEqual(['{"id":', '}']);
    // Not two strings, or not there: that message goes to the SDK.
    expect(recorded?.answer(1)).toBeUndefined();
    expect(recorded?.answer(5)).toBeUndefined();
  });

  it.each([
    ['no index', {}],
    ['an index that is not JSON', { 'index.json': '{"format":1,' }],
    ['another format', { 'index.json': JSON.stringify({ ...INDEX, format: 2 }) }],
    ['no count', { 'index.json': JSON.stringify({ ...INDEX, count: undefined }) }],
    ['an answer past the count', { 'index.json': JSON.stringify({ ...INDEX, count: 1 }) }],
    ['a surface missing', { 'index.json': JSON.stringify({ ...INDEX, legacy: { '2025-11-25': { plain: { initialize: 0 } } } }) }],
    ['a fractional answer number', { 'index.json': JSON.stringify({ ...INDEX, legacy: { v: { plain: { initialize: 0.5 }, apps: {} } } }) }],
    ['an era that is a list', { 'index.json': JSON.stringify({ ...INDEX, modern: [] }) }],
  ])('%s: no fast start', (_name, files) => {
    expect(readHandshakeAnswers(folder(files))).toBeUndefined();
  });
});
