// The Debian mirror images are built from when nothing names one: the one this host's apt already
// uses (its sources in /etc/apt, one-line `deb` and deb822 `.sources` alike), so a build reaches
// exactly what `apt-get install` on the host reaches. It reads files and never touches the network.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const FALLBACK_DEBIAN_MIRROR = 'http://deb.debian.org/debian';

interface AptSource {
  uri: string;
  suites: string[];
}

/** `deb [opts] URI SUITE COMPONENT…` lines of a sources.list file. */
function oneLineSources(text: string): AptSource[] {
  const sources: AptSource[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line.startsWith('deb ')) continue;
    const words = line
      .slice(4)
      .replace(/\[[^\]]*\]/, '')
      .trim()
      .split(/\s+/);
    if (words.length >= 2) sources.push({ uri: words[0]!, suites: [words[1]!] });
  }
  return sources;
}

/** Stanzas of a deb822 `.sources` file with `Types: deb`. */
function deb822Sources(text: string): AptSource[] {
  const sources: AptSource[] = [];
  for (const stanza of text.split(/\n\s*\n/)) {
    const fields = new Map<string, string>();
    for (const line of stanza.split('\n')) {
      const match = /^([A-Za-z-]+):\s*(.*)$/.exec(line.trim());
      if (match !== null) fields.set(match[1]!.toLowerCase(), match[2]!);
    }
    if (!(fields.get('types') ?? '').split(/\s+/).includes('deb')) continue;
    if ((fields.get('enabled') ?? 'yes') === 'no') continue;
    const suites = (fields.get('suites') ?? '').split(/\s+/).filter(Boolean);
    for (const uri of (fields.get('uris') ?? '').split(/\s+/).filter(Boolean))
      sources.push({ uri, suites });
  }
  return sources;
}

/** The host's apt sources, in apt's order (sources.list, then sources.list.d sorted). */
export function hostAptSources(etcApt = '/etc/apt'): AptSource[] {
  const read = (path: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return '';
    }
  };
  const sources = oneLineSources(read(join(etcApt, 'sources.list')));
  let entries: string[] = [];
  try {
    entries = readdirSync(join(etcApt, 'sources.list.d')).sort();
  } catch {
    entries = [];
  }
  for (const entry of entries) {
    const path = join(etcApt, 'sources.list.d', entry);
    if (entry.endsWith('.list')) sources.push(...oneLineSources(read(path)));
    else if (entry.endsWith('.sources')) sources.push(...deb822Sources(read(path)));
  }
  return sources;
}

/**
 * The host's Debian archive mirror: the first apt source whose path ends in `/debian` and that
 * carries a release suite (not -security or -updates); the fallback when there is none.
 */
export function hostDebianMirror(etcApt = '/etc/apt'): string {
  for (const source of hostAptSources(etcApt)) {
    const uri = source.uri.replace(/\/+$/, '');
    if (!/^https?:\/\//.test(uri) || !uri.endsWith('/debian')) continue;
    if (source.suites.some((suite) => !/-(security|updates|backports)$/.test(suite))) return uri;
  }
  return FALLBACK_DEBIAN_MIRROR;
}
