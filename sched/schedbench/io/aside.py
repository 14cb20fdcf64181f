"""Files written under a temporary name beside their final one, then renamed into place:
no reader sees half a file, and a write that fails or is interrupted leaves neither a
half file nor the temporary one."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def written_aside(path: Path, unique: bool = False) -> Iterator[Path]:
    """Yield the temporary path to write ``path``'s content to, ``.NAME.tmp`` beside it
    (``unique``: with a random part, for processes writing side by side); it is renamed
    onto ``path`` when the block ends and removed when the block raises."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp" if unique else f".{path.name}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
