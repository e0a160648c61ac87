"""Parse aider-style SEARCH/REPLACE blocks (or whole files in fences) from a model reply."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_BLOCK = re.compile(
    r"^[ \t]*<{5,9} ?SEARCH[^\n]*\n(.*?)^[ \t]*={5,9}[ \t]*\n(.*?)^[ \t]*>{5,9} ?REPLACE[^\n]*$",
    re.DOTALL | re.MULTILINE,
)
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class EditBlock:
    path: str
    search: str  # '' = create the file / replace everything
    replace: str
    whole_file: bool = False


def _clean_name(line: str) -> str:
    name = line.strip().strip("`*#:").strip()
    for prefix in ("File:", "file:", "Path:", "path:", "Filename:", "filename:"):
        if name.startswith(prefix):
            name = name[len(prefix):].strip()
    return name.strip("`*'\" ")


def _strip_block_text(text: str) -> str:
    return text[:-1] if text.endswith("\n") else text


def _path_before(text: str, pos: int, files: Sequence[str], last: str | None) -> str | None:
    """The file named on the nearest non-empty, non-fence line before ``pos``."""
    for line in reversed(text[:pos].splitlines()[-3:]):
        if not line.strip() or line.strip().startswith("```"):
            continue
        name = _clean_name(line)
        if name in files or ("/" in name or "." in name) and " " not in name:
            return name
        break
    if last is not None:
        return last
    return files[0] if len(files) == 1 else None


def parse_edit_blocks(reply: str, files: Sequence[str]) -> tuple[list[EditBlock], list[str]]:
    """(blocks, errors). ``files`` are the paths the prompt showed; a block naming none of them
    falls back to the single file, or to the previous block's file."""
    blocks: list[EditBlock] = []
    errors: list[str] = []
    last: str | None = None
    for m in _BLOCK.finditer(reply):
        path = _path_before(reply, m.start(), files, last)
        if path is None:
            errors.append("a SEARCH/REPLACE block does not name its file")
            continue
        last = path
        blocks.append(EditBlock(path, _strip_block_text(m.group(1)), _strip_block_text(m.group(2))))
    if blocks or errors:
        return blocks, errors
    if "<<<<<<< SEARCH" in reply or "SEARCH" in reply and ">>>>>>> REPLACE" in reply:
        return [], ["a SEARCH/REPLACE block is malformed (it needs <<<<<<< SEARCH, =======, >>>>>>> REPLACE lines)"]
    # whole files in fences: each fence preceded by its path, or the only file
    for m in _FENCE.finditer(reply):
        path = _path_before(reply, m.start(), files, None)
        if path is None:
            continue
        blocks.append(EditBlock(path, "", m.group(1), whole_file=True))
    return blocks, errors
