// Extension tests: a fresh fake IndexedDB per test file, and the DOM cleaned between tests.
import 'fake-indexeddb/auto';
import { cleanup } from '@testing-library/preact';
import { afterEach } from 'vitest';

afterEach(() => cleanup());
