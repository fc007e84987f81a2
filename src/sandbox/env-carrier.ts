// Carries a program's environment through the host-side launchers (bash, prlimit, unshare,
// setpriv, Perl) that run as root before the program: each variable travels under a prefix, so none
// of them — LD_PRELOAD, BASH_ENV, BASH_FUNC_*, PERL5OPT — is seen as itself until the last step,
// which runs as the sandbox uid (or inside the sandbox) and restores them just before its exec. It
// never puts a value on a command line.
export const ENV_PREFIX = 'KEEL_ENV_';
export const PERL = '/usr/bin/perl';

/** The launcher's environment: only the program's variables, each under ENV_PREFIX. */
export function carrierEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([name, value]) => [ENV_PREFIX + name, value]));
}

/** Perl that replaces %ENV with the carried variables (the start of every last-step script). */
export const RESTORE_ENV_PERL = `my %program = map { substr($_, length '${ENV_PREFIX}') => $ENV{$_} } grep { /^${ENV_PREFIX}/ } keys %ENV;
%ENV = %program;`;

/**
 * `[perl, -e, script, --, dir, ...argv]`: restores the carried variables, enters `dir` and execs
 * argv (exit 127 when it is not found, 126 when it cannot run), like `env -C dir -- argv`.
 */
export function execWithCarriedEnv(dir: string, argv: string[]): string[] {
  const script = `use strict; use warnings; use POSIX ();
${RESTORE_ENV_PERL}
my ($cwd, @argv) = @ARGV;
chdir($cwd) or die "keel-exec: chdir $cwd: $!\\n";
{ no warnings qw(exec); exec { $argv[0] } @argv; }
print STDERR "keel-exec: $argv[0]: $!\\n";
POSIX::_exit($!{ENOENT} ? 127 : 126);`;
  return [PERL, '-e', script, '--', dir, ...argv];
}
