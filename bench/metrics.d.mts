export function record(key: string, label: string, value: number, unit: string, goal?: number, better?: 'lower' | 'higher'): void;
export function report(baselineFile: string, options: { save: boolean; commit?: string }): number;
