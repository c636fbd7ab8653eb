// Builds the review shown inside the chat (MCP App, app/) into ONE self-contained file, dist/app/review.html: script
// and styles inlined, nothing loaded from anywhere (its CSP allows no outside domain). The server embeds its text.
// The view runs in an opaque-origin frame: no IndexedDB, no extension APIs, and not the extension's hub socket either.
import { buildSingleFile, reportSize, singleFileProblems } from './single-file-build.mjs';

const started = performance.now();
const html = await buildSingleFile({ folder: 'app', file: 'review.html', what: 'the app', forbidden: ['kit/hub/', 'node_modules/@modelcontextprotocol/'] });

// Checks on what a host will embed: its own policy first, then one file with nothing it would fetch.
const problems = singleFileProblems(html);
if (!/^<!doctype html>\s*<html[^>]*>\s*<head>\s*<meta name="elicitly-csp" content="default-src 'none';/i.test(html)) problems.unshift('the view\'s policy (<meta name="elicitly-csp">, which app/own-csp.ts puts in force) is not the first thing in <head>');
if (problems.length) throw new Error(`dist/app/review.html:\n  ${problems.join('\n  ')}`);
reportSize('dist/app/review.html', html, started);
