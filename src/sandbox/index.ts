// The package subpath `keel/sandbox`: the built-in workspace tools and sandbox profiles, for agents
// modules that use them. Kept out of the root `keel` so agent code that needs no sandbox loads
// none; nothing here opens a sandbox, a store or a database connection by being imported (tools
// find the node's manager in their context).
export { sandboxTools } from '../tools/sandbox-tools.ts';
export type { SandboxToolsOptions } from '../tools/sandbox-tools.ts';
export { defineImage } from './images/image-spec.ts';
export type { ImageSpec, ImageSpecInput, ProfileImage } from './images/image-spec.ts';
export { defineSandboxProfile } from './profile.ts';
export type { SandboxProfile, SandboxProfileInput } from './profile.ts';
export { tierAvailability } from './tiers.ts';
export type { Tier, TierAvailability } from './tiers.ts';
export type { LimitReason } from './limits.ts';
export type { LifecyclePolicy } from './lifecycle-policy.ts';
