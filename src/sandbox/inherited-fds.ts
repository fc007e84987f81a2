// Descriptors this process inherited without close-on-exec (from whatever started Keel): every
// child would inherit them too, right into a sandbox. Node cannot set FD_CLOEXEC or close-from, so
// children get /dev/null dup'ed over those numbers through their stdio array instead. Read once:
// Node's own descriptors are all close-on-exec.
import { openSync, readdirSync, readFileSync } from 'node:fs';

const O_CLOEXEC_OCTAL = 0o2000000;
let cached: number[] | undefined;
let devNull: number | undefined;

export function leakyInheritedFds(): number[] {
  if (cached !== undefined) return cached;
  const leaky: number[] = [];
  let names: string[] = [];
  try {
    names = readdirSync('/proc/self/fdinfo');
  } catch {
    // not Linux or no /proc: nothing known to mask
  }
  for (const name of names) {
    const fd = Number(name);
    if (!(fd > 2)) continue;
    try {
      const flags = /flags:\s*([0-7]+)/.exec(
        readFileSync(`/proc/self/fdinfo/${name}`, 'utf8'),
      )?.[1];
      if (flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC_OCTAL) === 0) leaky.push(fd);
    } catch {
      // the directory's own descriptor, gone by the time it is read
    }
  }
  cached = leaky;
  return leaky;
}

/**
 * A stdio array for spawn(): `base` first, then /dev/null over every leaky inherited descriptor at
 * or above base.length, and 'ignore' elsewhere (close-on-exec descriptors vanish at exec anyway).
 */
export function maskedStdio(
  base: Array<'pipe' | 'ignore' | number>,
): Array<'pipe' | 'ignore' | number> {
  const leaky = leakyInheritedFds().filter((fd) => fd >= base.length);
  if (leaky.length === 0) return base;
  devNull ??= openSync('/dev/null', 'r');
  const stdio: Array<'pipe' | 'ignore' | number> = [...base];
  for (let fd = base.length; fd <= Math.max(...leaky); fd++)
    stdio.push(leaky.includes(fd) ? devNull : 'ignore');
  return stdio;
}
