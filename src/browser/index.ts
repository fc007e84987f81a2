// keel/browser: the built-in browser tools and what embedding code needs to attach a browser pool
// to an engine. Agent code imports browserTools; the pool itself is the runtime's.
export { browserTools, type BrowserToolsOptions } from '../tools/browser-tools.ts';
export { BrowserPool, type BrowserPoolOptions, type SessionRequest } from './browser-pool.ts';
export { CHROMIUM_ARGS } from './chromium.ts';
export type { ReclaimReason, SessionState } from './session-state.ts';
