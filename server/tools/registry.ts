import { elicitConfirm } from './elicit-confirm.js';
import { elicitDoctor } from './elicit-doctor.js';
import { elicitForm } from './elicit-form.js';
import type { ToolDefinition } from './tool.js';

/** Hosts list tools in registration order; alphabetical keeps the list predictable as it grows. */
export const TOOLS: readonly ToolDefinition[] = [elicitConfirm, elicitDoctor, elicitForm].sort((a, b) => a.name.localeCompare(b.name));
