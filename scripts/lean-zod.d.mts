import type { Plugin } from 'vite';

export function leanZod(options: { root: string }): Plugin;
