/**
 * The source watcher of `reclazz-build watch`: reports changed source paths, leaving out class
 * output folders, tool folders, class files and editors' swap, lock and backup files.
 */
import path from 'node:path';
import { watchTree, type TreeWatch } from './fswatch.js';
import { startsWithDir } from '../util/fs.js';

/** Folder names never watched below a source root. */
const IGNORED_NAMES: ReadonlySet<string> = new Set(['.git', 'node_modules', '.reclazz']);

// Vim's write probe: before a rename-save it checks it may create a file in the folder by creating
// "4913", or 4913 + 123k when that name is taken.
const VIM_PROBE_FIRST = 4913;
const VIM_PROBE_STEP = 123;

/**
 * What editors write beside a file they open or save, by file name: vim, Emacs and nano recorded
 * from real saves, the rest from the editors' documentation or source.
 */
const EDITOR_FILES: readonly { who: string; test: (name: string) => boolean }[] = [
  // `.A.java.swp`, then `.swo`, `.swn`… when taken; `.A.java.swx` and `.A.java.swpx` are probes.
  { who: 'vim, neovim and nano swap and lock files', test: (name) => /^[._].+\.sw[a-px]x?$/.test(name) },
  { who: "vim's write probe", test: isVimProbe },
  // `A.java~` (vim, Emacs, nano -B, gedit, Kate), Emacs' numbered `A.java.~3~`.
  { who: 'backup copies', test: (name) => name.endsWith('~') },
  { who: 'Emacs auto-save files', test: (name) => name.length > 2 && name.startsWith('#') && name.endsWith('#') },
  { who: 'Emacs lock links', test: (name) => name.startsWith('.#') },
  // On-the-fly syntax checkers copy the buffer beside the file.
  { who: "Emacs flycheck's and flymake's copies", test: (name) => name.startsWith('flycheck_') || /_flymake\.[^.]+$/.test(name) },
  { who: "JetBrains IDEs' safe write", test: (name) => name.endsWith('___jb_tmp___') || name.endsWith('___jb_old___') },
  // VS Code writes user files in place; its atomic writes (settings, state) go through `<name>.vsctmp`.
  { who: "VS Code's atomic writes", test: (name) => name.endsWith('.vsctmp') },
  { who: "GNOME editors' atomic replace (GIO)", test: (name) => name.startsWith('.goutputstream-') },
  // `sed -i` writes the edited copy as `sedXXXXXX` beside the file, then renames it over.
  { who: "sed -i's edited copy", test: (name) => /^sed[A-Za-z0-9]{6}$/.test(name) },
  { who: "other tools' atomic-save temporaries", test: (name) => /\.(tmp|temp)$/i.test(name) },
  { who: 'macOS Finder metadata', test: (name) => name === '.DS_Store' || name.startsWith('._') },
];

/**
 * True when a file named `name` (no folder) is an editor's swap, lock, backup or temporary file, never a source.
 * @internal for its tests
 */
export function isEditorTemporary(name: string): boolean {
  return EDITOR_FILES.some((rule) => rule.test(name));
}

function isVimProbe(name: string): boolean {
  if (!/^\d{4,9}$/.test(name)) return false;
  const n = Number(name);
  return n >= VIM_PROBE_FIRST && (n - VIM_PROBE_FIRST) % VIM_PROBE_STEP === 0;
}

/** What {@link watchSources} needs. */
export interface SourceWatchOptions {
  /** Folders or files to watch (absolute), normally `findWatchSources().roots`; missing ones are watched once they exist. */
  roots: readonly string[];
  /** Folders (absolute) left out with everything below them: the class output folders, and `outputDirs` from sources.ts. */
  ignoreDirs?: readonly string[];
  /** Called with the absolute path of each source file or folder created, written, renamed or removed. May repeat a path. */
  onChange: (path: string) => void;
  /** Called for each error the watcher reports (a `watch-failed` warning names the fix for ENOSPC and EMFILE). The watch goes on. */
  onError: (error: Error) => void;
  /** How often missing or removed roots are looked for, in ms (default 1000). */
  recheckMs?: number;
}

/** A running source watch. */
export interface SourceWatcher {
  /** Resolves once the existing roots are fully watched. */
  readonly ready: Promise<void>;
  /** Roots not watched right now because they do not exist. */
  missingRoots(): string[];
  /** Stops watching; releases every handle and timer. */
  close(): Promise<void>;
}

/** Starts watching the source roots. A root or folder that appears, goes away or is replaced is reported as changed. */
export function watchSources(options: SourceWatchOptions): SourceWatcher {
  const ignoreDirs = (options.ignoreDirs ?? []).map((dir) => path.resolve(dir));
  const tree: TreeWatch = watchTree({
    roots: options.roots,
    ignore: (candidate) => {
      const name = path.basename(candidate);
      return (
        IGNORED_NAMES.has(name) ||
        name.endsWith('.class') ||
        isEditorTemporary(name) ||
        ignoreDirs.some((dir) => startsWithDir(candidate, dir))
      );
    },
    onChange: (change) => options.onChange(change.path),
    onGap: (folder) => options.onChange(folder),
    onError: options.onError,
    recheckMs: options.recheckMs,
  });
  return { ready: tree.ready, missingRoots: () => tree.missingRoots(), close: () => tree.close() };
}
