// Types for the TypeScript callers (the unit test) of bundle-size.mjs, which Node runs as is in the build.
export interface FileSize { file: string; raw: number; gzip: number }
export interface Bundle { name: string; files: FileSize[]; budget: number }

export const BUDGETS: { popup: number; app: number };
export function sizeOf(bytes: Uint8Array): { raw: number; gzip: number };
export function fileBundle(dir: string, file: string): FileSize[];
export function pageBundle(dir: string, page: string): FileSize[];
export function popupBundle(extensionDir: string): FileSize[];
export function judgeBudgets(bundles: Bundle[]): { ok: boolean; lines: string[] };
