// Deterministic randomness for ctx.random() and ctx.uuid(): a small seeded PRNG (sfc32) keyed by
// the run id, so replay yields the same values without journaling each call. Hand-written because
// it must be seedable and synchronous; Node's crypto RNG is neither, and a dependency for 20 lines
// would not pay for itself.
import { createHash } from 'node:crypto';

export class SeededRandom {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: string) {
    const h = createHash('sha256').update(seed).digest();
    this.#a = h.readUInt32LE(0);
    this.#b = h.readUInt32LE(4);
    this.#c = h.readUInt32LE(8);
    this.#d = h.readUInt32LE(12);
  }

  /** The generator's state, for a checkpoint (run-snapshot.ts): `restore` continues from it. */
  state(): [number, number, number, number] {
    return [this.#a, this.#b, this.#c, this.#d];
  }

  /** Continues from a state taken by `state()` (a resume from a checkpoint). */
  restore(state: readonly [number, number, number, number]): void {
    [this.#a, this.#b, this.#c, this.#d] = state;
  }

  /** A 32-bit unsigned integer. */
  nextUint32(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return t >>> 0;
  }

  /** A number in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** A version-4-formatted UUID. */
  uuid(): string {
    const bytes = new Uint8Array(16);
    for (let i = 0; i < 16; i += 4) {
      const v = this.nextUint32();
      bytes[i] = v & 0xff;
      bytes[i + 1] = (v >>> 8) & 0xff;
      bytes[i + 2] = (v >>> 16) & 0xff;
      bytes[i + 3] = (v >>> 24) & 0xff;
    }
    bytes[6] = (bytes[6]! & 0x0f) | 0x40;
    bytes[8] = (bytes[8]! & 0x3f) | 0x80;
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}
