"""The window's size, position and last view, kept in ``<app dir>/window.json``.

The app dir is private (0700) and the file is written 0600 and atomically like every
other JobCtrl file (``backend.paths.write_private_json``); QSettings would put it in the
user's config folder with the umask's mode instead. A missing or unreadable file means
"first launch": the window opens at its preferred size on Pipelines.

Restoring clamps the saved rectangle to a screen that is still there (a laptop undocked
from its second monitor must not open the window off-screen): the screen it overlaps
most, else the primary one; too large a window shrinks to that screen's free area.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path

from backend.desktop_contract import write_private_json

log = logging.getLogger(__name__)

FILE_NAME = "window.json"
VERSION = 1

Rect = tuple[int, int, int, int]  # x, y, width, height


@dataclass(frozen=True)
class WindowState:
    x: int
    y: int
    width: int
    height: int
    maximized: bool = False
    view: str | None = None

    @property
    def rect(self) -> Rect:
        return self.x, self.y, self.width, self.height


def state_path(app_dir: Path) -> Path:
    return Path(app_dir) / FILE_NAME


def read_window_state(app_dir: Path) -> WindowState | None:
    path = state_path(app_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != VERSION:
            return None
        return WindowState(int(data["x"]), int(data["y"]), int(data["width"]),
                           int(data["height"]), bool(data.get("maximized")),
                           data.get("view") if isinstance(data.get("view"), str) else None)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
        log.warning("ignoring the saved window state in %s: %s", path, error)
        return None


def write_window_state(app_dir: Path, state: WindowState) -> None:
    try:
        write_private_json(state_path(app_dir), {"version": VERSION, **asdict(state)})
    except OSError as error:  # a read-only or vanished app dir must not break the window
        log.warning("could not save the window state: %s", error)


def _overlap(a: Rect, b: Rect) -> int:
    width = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    height = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return max(width, 0) * max(height, 0)


def clamp_to_screens(rect: Rect, screens: list[Rect]) -> Rect:
    """``rect`` moved (and shrunk if need be) into the screen it overlaps most; into the
    first screen (the primary) when it overlaps none. ``screens`` are available areas."""
    if not screens:
        return rect
    screen = max(screens, key=lambda area: _overlap(rect, area))
    if _overlap(rect, screen) == 0:
        screen = screens[0]
    sx, sy, sw, sh = screen
    width, height = min(rect[2], sw), min(rect[3], sh)
    x = min(max(rect[0], sx), sx + sw - width)
    y = min(max(rect[1], sy), sy + sh - height)
    return x, y, width, height
