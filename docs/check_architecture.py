#!/usr/bin/env python3
"""Checks that docs/architecture.md names every folder of the source tree, and only
folders that exist (the ctest test `architecture_doc`).

Usage: docs/check_architecture.py [SOURCE_ROOT]   (default: the folder above docs/)

Which folders must be named: every directory under SOURCE_ROOT that holds at least
one file directly, except
  - the top folder itself;
  - build directories: top-level folders whose name starts with `build`;
  - hidden folders (a name starting with `.`: `.git`, `.pytest_cache`, an editor's),
    except `.ci/`, which holds what CI runs;
  - `__pycache__` folders, wherever they are;
  - the folders inside `fuzz/seeds/` and `fuzz/regressions/`: one folder of inputs
    per fuzz target, named with the target; `fuzz/seeds/` and `fuzz/regressions/`
    stand for them (and must be named when anything beneath them holds a file).
The e2e folders (`e2e/programs/`, `e2e/java/`, `e2e/php/`) are not such data: they
hold the sources of the programs the tests build and run, so they are named too.
A folder that holds only folders (`java/api/`) need not be named.

What the document names: every `path/` in backquotes (a relative path that ends with
a slash, such as `cli/run/`). Each must be a folder of the tree.

Prints one line per folder missing from the document, and one per folder the
document names that does not exist, and exits 1 when there is any; 0 otherwise.
Python 3, standard library only.
"""

import os
import re
import sys
from pathlib import Path

DOCUMENT = Path("docs") / "architecture.md"
# Folders whose subfolders are collapsed into them: one folder per fuzz target.
COLLAPSED = {"fuzz/seeds", "fuzz/regressions"}
NAMED = re.compile(r"`([A-Za-z0-9_.][A-Za-z0-9_./-]*/)`")


def skipped(relative, name):
    """Whether the folder `name` at `relative` (a POSIX path from the root) and what
    is beneath it are left out."""
    if name == "__pycache__":
        return True
    if name.startswith(".") and relative != ".ci":
        return True
    if "/" not in relative and name.startswith("build"):
        return True
    return False


def holds_a_file(path):
    """Whether anything beneath `path` (not following links to folders) is a file."""
    for _, _, files in os.walk(path):
        if files:
            return True
    return False


def source_folders(root):
    """The folders that must be named, as POSIX paths relative to `root` with a
    trailing slash."""
    found = set()
    for directory, subdirectories, files in os.walk(root):
        relative = Path(directory).relative_to(root).as_posix()
        kept = []
        for name in subdirectories:
            below = f"{relative}/{name}" if relative != "." else name
            if skipped(below, name):
                continue
            if below in COLLAPSED:
                if holds_a_file(Path(directory) / name):
                    found.add(below + "/")
                continue
            kept.append(name)
        subdirectories[:] = sorted(kept)
        if relative != "." and files:
            found.add(relative + "/")
    return found


def named_folders(text):
    """The folders the document names: every `path/` in backquotes."""
    return {m.group(1) for m in NAMED.finditer(text) if not m.group(1).startswith("./")}


def main(argv):
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    document = root / DOCUMENT
    if not document.is_file():
        print(f"{document}: no such file")
        return 1
    named = named_folders(document.read_text(encoding="utf-8"))
    folders = source_folders(root)
    problems = []
    for folder in sorted(folders - named):
        problems.append(f"{DOCUMENT}: the folder {folder} is not named (add a line `{folder}` — what it holds)")
    for folder in sorted(named):
        if not (root / folder).is_dir():
            problems.append(f"{DOCUMENT}: names {folder}, which is not a folder of the tree")
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
