// A seeded uniform generator for the placement simulator and tests: the same seed gives the same
// placements on every machine. Hand-written (mulberry32, 32-bit state) because only a repeatable
// stream of floats in [0, 1) is needed; it is not for anything that must be unpredictable.

/** A generator of floats in [0, 1) fixed by `seed`. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
