// The shared space of a run tree (issue 21): versioned text files that a root run and all its
// descendants read and write, keyed by the root run's id. A write names the version it expects
// (null: the file must not exist yet) and fails `conflict` on a mismatch; versions count from 1.
// This module owns the records, the limits and the path rules; it never touches a store.
import { KeelError } from './keel-error.ts';

/** Largest file content, in UTF-8 bytes (a read's content is journaled with its result). */
export const SHARED_FILE_MAX_BYTES = 1024 * 1024;
export const SHARED_PATH_MAX_CHARS = 512;
/** Most files one list returns. */
export const SHARED_LIST_MAX_FILES = 1000;
/** Most parent links followed to find a run's root (a guard against a corrupt parent chain). */
export const RUN_TREE_DEPTH_MAX = 256;

/** One file's latest version, without its content. */
export interface SharedFileInfo {
  path: string;
  version: number;
  size: number;
  sha256: string;
  writtenByRun: string;
  writtenAt: number;
}

export interface SharedFile extends SharedFileInfo {
  content: string;
}

/** A compare-and-set write, as the store takes it. */
export interface SharedFileWrite {
  rootRunId: string;
  tenantId: string;
  path: string;
  content: string;
  /** The version the writer read (0: the file must not exist). */
  expectedVersion: number;
  writtenByRun: string;
  /** Same on every replay of one write (`<runId>.<seq>`): a second apply returns the first's version. */
  writeId: string;
}

export type SharedWriteOutcome =
  | { ok: true; version: number; duplicate: boolean }
  | { ok: false; currentVersion: number };

/** A control character (C0 or DEL) or a backslash: never in a shared path. */
function hasForbiddenChar(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || c === 0x5c) return true;
  }
  return false;
}

/**
 * A relative path of `/`-separated segments: no empty, `.` or `..` segment, no control characters
 * or backslashes, 1..SHARED_PATH_MAX_CHARS characters. Throws `shared_path_invalid`.
 */
export function checkSharedPath(path: unknown): string {
  const bad = (why: string) =>
    new KeelError('shared_path_invalid', `shared path ${JSON.stringify(path)} ${why}`, {
      details: { path: typeof path === 'string' ? path.slice(0, SHARED_PATH_MAX_CHARS) : null },
    });
  if (typeof path !== 'string') throw bad('is not a string');
  if (path.length === 0 || path.length > SHARED_PATH_MAX_CHARS)
    throw bad(`must be 1..${SHARED_PATH_MAX_CHARS} characters`);
  if (!path.isWellFormed()) throw bad('holds a lone surrogate');
  if (hasForbiddenChar(path)) throw bad('holds a control character or a backslash');
  for (const segment of path.split('/'))
    if (segment === '' || segment === '.' || segment === '..')
      throw bad('must be relative, without empty, "." or ".." segments');
  return path;
}

/** A list prefix: empty, or what a path may start with (same characters as a path). */
export function checkSharedPrefix(prefix: unknown): string {
  if (prefix === undefined || prefix === '') return '';
  if (
    typeof prefix !== 'string' ||
    prefix.length > SHARED_PATH_MAX_CHARS ||
    !prefix.isWellFormed() ||
    hasForbiddenChar(prefix)
  )
    throw new KeelError(
      'shared_path_invalid',
      `shared path prefix ${JSON.stringify(prefix)} is invalid`,
    );
  return prefix;
}

/** The content of a write: a string within SHARED_FILE_MAX_BYTES (`shared_file_too_large`). */
export function checkSharedContent(content: unknown): string {
  if (typeof content !== 'string')
    throw new KeelError('shared_content_invalid', 'shared file content must be a string');
  if (!content.isWellFormed())
    throw new KeelError('shared_content_invalid', 'shared file content holds a lone surrogate');
  const size = new TextEncoder().encode(content).length;
  if (size > SHARED_FILE_MAX_BYTES)
    throw new KeelError(
      'shared_file_too_large',
      `shared file content is ${size} bytes; the limit is ${SHARED_FILE_MAX_BYTES}`,
      { details: { size, limit: SHARED_FILE_MAX_BYTES } },
    );
  return content;
}

/** The expected version of a write: null/0 (must not exist) or a version from 1. */
export function checkExpectedVersion(expected: unknown): number {
  if (expected === null || expected === 0) return 0;
  if (typeof expected !== 'number' || !Number.isSafeInteger(expected) || expected < 0)
    throw new KeelError(
      'shared_version_invalid',
      `expectedVersion must be null or a whole number from 0, not ${JSON.stringify(expected)}`,
    );
  return expected;
}
