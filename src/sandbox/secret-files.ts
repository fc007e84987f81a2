// Secrets placed as files: a profile declares `secrets.files: { "/run/secrets/token": "secret:NAME" }`
// and each `exec` finds the file there, mode 0400, owned by the sandbox uid. /run is a private tmpfs
// on the namespace and gVisor tiers (never the workspace), so a file is never in a snapshot or a
// manifest, and it goes with the sandbox's mounts when the sandbox is reclaimed (a one-shot
// command's own mounts end with it). The value travels like a secret variable, through the tier's
// environment carrier, never a command line; a shell builtin (printf) writes it and the variable is
// unset before the program starts, so the program sees the file only.
import { z } from 'zod';

/** The one directory secret files are placed in: private to the sandbox, on its tmpfs /run. */
export const SECRET_FILES_DIR = '/run/secrets';
/** Most secret files one profile declares. */
export const SECRET_FILES_MAX = 16;
/** The variable carrying the i-th file's value to the placing shell (unset before the program). */
const VALUE_VARIABLE = 'KEEL_SECRET_FILE_';
/** The exit status of a command whose secret files could not be placed. */
export const SECRET_FILE_FAILED_EXIT = 126;

export const SecretFilePath = z
  .string()
  .regex(
    /^\/run\/secrets\/[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/,
    `a file directly under ${SECRET_FILES_DIR}/ (a private tmpfs), e.g. ${SECRET_FILES_DIR}/token`,
  );

/**
 * $1: the number of files, then their paths, then `--` and the program's argv. Each value comes in
 * KEEL_SECRET_FILE_<i>; the directory is made 0700 and the file 0400 (umask), an earlier file of
 * the same sandbox replaced.
 */
const PLACE_SCRIPT = `n=$1; shift; i=0
while [ "$i" -lt "$n" ]; do
  p=$1; shift
  eval "v=\\\${${VALUE_VARIABLE}$i-}"; unset "${VALUE_VARIABLE}$i"
  { (umask 077 && mkdir -p -- "\${p%/*}") && rm -f -- "$p" && (umask 277 && printf '%s' "$v" > "$p"); } || {
    printf 'keel: cannot place the secret file %s\\n' "$p" >&2; exit ${SECRET_FILE_FAILED_EXIT}; }
  i=$((i + 1))
done
shift; unset v n i p
exec "$@"`;

/**
 * `argv` preceded by the placing of `files` (path → value), and the variables carrying the values:
 * what the tier runs instead of `argv`, with those variables added to the command's.
 */
export function withSecretFiles(
  argv: readonly string[],
  files: Readonly<Record<string, string>>,
): { argv: string[]; env: Record<string, string> } {
  const entries = Object.entries(files);
  if (entries.length === 0) return { argv: [...argv], env: {} };
  return {
    argv: [
      '/bin/sh',
      '-c',
      PLACE_SCRIPT,
      'keel-secret-files',
      String(entries.length),
      ...entries.map(([path]) => path),
      '--',
      ...argv,
    ],
    env: Object.fromEntries(entries.map(([, value], i) => [`${VALUE_VARIABLE}${i}`, value])),
  };
}
