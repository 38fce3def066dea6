"""Files a connector owns outright (OpenCode's plugin, Cursor's rule file): written atomically,
and the folders made for them remembered, so that removing the file removes those folders too."""

from __future__ import annotations

import os
from pathlib import Path

MADE = ".kenning-created"


def write_owned(path: Path, text: str) -> None:
    made = [p for p in (path.parent.parent, path.parent) if not p.exists()]
    path.parent.mkdir(parents=True, exist_ok=True)
    if made:
        with (path.parent / MADE).open("a", encoding="utf-8") as handle:
            handle.writelines(f"{folder}\n" for folder in made)
    tmp = path.with_name(path.name + ".kenning-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def remove_owned(path: Path) -> None:
    path.unlink()
    record = path.parent / MADE
    if not record.exists():
        return
    folders = [Path(line) for line in record.read_text(encoding="utf-8").splitlines() if line]
    record.unlink()
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        if folder.exists() and not any(folder.iterdir()):
            folder.rmdir()
