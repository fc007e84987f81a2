// Paths the built-in workspace tools accept, and the shell that checks them inside the sandbox.
// A path is relative to the workspace, has no `..` component, no NUL and, once normalised, does
// not start with `-`; the tools then hand it to a command as `./<path>` (after `--` where the
// command takes options), so a path can never be read as an option or a `find` expression. Inside
// the sandbox, GUARD refuses a path with a symbolic link on it (O_NOFOLLOW semantics for every
// component): the tools never read, write or list through a link, wherever it points.
import { posix } from 'node:path';
import { z } from 'zod';

/** Longest workspace path a tool accepts. */
export const PATH_MAX_CHARS = 1024;
/** Exit status GUARD ends with when the path is refused; its reason is on stderr. */
export const GUARD_REFUSED_EXIT = 86;

/** `a//b/./c/` → `a/b/c`; the workspace itself is `.`. */
export const normalizeWorkspacePath = (path: string): string =>
  posix.normalize(path).replace(/(.)\/+$/, '$1');

export const WorkspacePath = z
  .string()
  .min(1)
  .max(PATH_MAX_CHARS)
  .refine((path) => !path.includes('\0'), { message: 'must not contain a NUL character' })
  .refine((path) => !path.startsWith('/'), {
    message: 'must be relative to the workspace (no leading /)',
  })
  .refine((path) => !path.split('/').includes('..'), {
    message: 'must stay inside the workspace (no .. component)',
  })
  .refine((path) => !normalizeWorkspacePath(path).startsWith('-'), {
    message: 'must not start with - (it would read as an option)',
  });

/** The argument a command gets for a validated workspace path: always `./…`, never an option. */
export const sandboxArgument = (path: string): string => `./${normalizeWorkspacePath(path)}`;

/**
 * POSIX sh, run with the `./…` path as $1: exits GUARD_REFUSED_EXIT if any component of it is a
 * symbolic link. Globbing is off and the path is split on `/` only.
 */
export const GUARD = [
  'set -f',
  'p=$1',
  'cur=',
  "IFS='/'",
  'for part in $p; do',
  '  if [ -z "$cur" ]; then cur=$part; else cur=$cur/$part; fi',
  '  if [ -L "$cur" ]; then',
  `    printf '%s is a symbolic link: workspace tools do not follow links\\n' "\${cur#./}" >&2`,
  `    exit ${GUARD_REFUSED_EXIT}`,
  '  fi',
  'done',
  'unset IFS',
].join('\n');
