"""The painted tray icon: its states told apart pixel by pixel, and legible at the sizes
tray hosts use (16, 22, 24 px) on light and dark panels.

A tray icon cannot know its panel's colour, so it carries its own contrast; the renders
are measured with the WCAG contrast ratio (>= 3, the level for graphics and large text):

* the glyph against the disc it sits on (the disc's most common colour vs the median of
  the glyph's brightest pixels), and enough glyph pixels to be a shape, not a speck;
* the icon against the panel: its disc or its light track, whichever stands out more
  (the disc on light panels, the track on dark ones), both sampled from the render.

The renders are saved as sheets (real size and enlarged) to tests/_artifacts and copied
to docs/screenshots/tray-icon-*.png by hand when the look changes.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter

from desktop.theme import contrast_ratio, relative_luminance
from desktop.tray import LOOK_COLORS, TRACK_COLOR, paint_spend_icon, spend_icon
from tests.desktop.test_tray import today

pytestmark = pytest.mark.desktop

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts"
TRAY_PX = (16, 22, 24)
# Light panels (KDE Breeze, Fusion's window) and dark ones (Fusion dark, Breeze dark, GNOME).
PANELS = {"light": ("#ffffff", "#efefef", "#eff0f1"), "dark": ("#323232", "#31363b", "#000000")}
STATES = {"normal": today(5, 25), "near": today(21, 25), "exhausted": today(25.4, 25),
          "unlimited": today(3, 0), "unknown": None}
MIN_CONTRAST = 3.0
MIN_GLYPH_SHARE = 0.08  # of the disc: a glyph, not a speck ("!" at 16 px is 11 %)


def pixel(image: QImage, x: int, y: int) -> QColor:
    return image.pixelColor(x, y)


def close_to(color: QColor, hex_color: str, tolerance: int = 40) -> bool:
    want = QColor(hex_color)
    return all(abs(a - b) <= tolerance for a, b in (
        (color.red(), want.red()), (color.green(), want.green()), (color.blue(), want.blue())))


# -- the states, told apart --------------------------------------------------------------------


@pytest.mark.parametrize(("state", "status", "left_spent"), [
    ("normal", today(5, 25), False),       # 20 %: the top is filled, 9 o'clock not
    ("near", today(21, 25), True),         # 84 %: 9 o'clock is filled too
    ("exhausted", today(25.4, 25), True),  # a full ring
])
def test_icon_states_are_painted_distinctly_and_saved(qapp, state, status, left_spent):
    size = 128
    image = paint_spend_icon(status, size).toImage()
    arc_middle = round(size * 0.045 + size * 0.12 / 2)  # the light band, then half the arc
    assert close_to(pixel(image, size // 2 + 3, arc_middle), LOOK_COLORS[state])
    left = pixel(image, arc_middle, size // 2)
    assert close_to(left, LOOK_COLORS[state] if left_spent else TRACK_COLOR)
    disc_radius, _band = disc_geometry(size)
    beside_glyph = pixel(image, round(size / 2 - disc_radius * 0.85), size // 2)
    assert close_to(beside_glyph, LOOK_COLORS[state])  # the disc of the state's colour
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert image.save(str(ARTIFACTS / f"tray-{state}.png"))


def test_unknown_spend_paints_an_empty_track_around_a_grey_disc(qapp):
    image = paint_spend_icon(None, 64).toImage()
    assert close_to(pixel(image, 35, 4), TRACK_COLOR)  # nothing spent is drawn
    assert close_to(pixel(image, 14, 32), LOOK_COLORS["unknown"])


def test_the_tray_gets_a_pixmap_painted_for_each_size(qapp):
    icon = spend_icon(today(5, 25))
    for size in TRAY_PX:
        painted = icon.pixmap(size, size).toImage()
        assert painted.size().width() == size
        assert painted == paint_spend_icon(today(5, 25), size).toImage()  # not a scaled copy


# -- legible on both panels --------------------------------------------------------------------


def on_panel(state: str, size: int, panel: str) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(QColor(panel))
    painter = QPainter(image)
    painter.drawPixmap(0, 0, paint_spend_icon(STATES[state], size))
    painter.end()
    return image


def disc_geometry(size: int) -> tuple[float, float]:
    """(disc radius, radius of the light band around it), as tray.py lays them out."""
    band, arc = max(0.9, size * 0.045), max(2.0, size * 0.12)
    disc_radius = size / 2 - (2 * band + arc)
    return disc_radius, disc_radius + band / 2


def pixels_within(image: QImage, radius: float) -> list[QColor]:
    centre = image.width() / 2
    return [pixel(image, x, y) for y in range(image.height()) for x in range(image.width())
            if math.hypot(x + 0.5 - centre, y + 0.5 - centre) <= radius]


def measure(image: QImage) -> dict[str, float]:
    size = image.width()
    disc_radius, band_radius = disc_geometry(size)
    inside = pixels_within(image, disc_radius - 0.5)
    disc = QColor(Counter(color.name() for color in inside).most_common(1)[0][0])
    glyph_pixels = [c for c in inside if contrast_ratio(c, disc) >= MIN_CONTRAST]
    brightest = sorted(inside, key=relative_luminance)[-max(1, len(glyph_pixels)):]
    glyph = brightest[len(brightest) // 2]
    centre = size / 2
    band = max((pixel(image, round(centre + band_radius * math.cos(a) - 0.5),
                      round(centre + band_radius * math.sin(a) - 0.5))
                for a in (i * math.pi / 18 for i in range(36))), key=relative_luminance)
    return {"disc": disc.name(), "glyph": contrast_ratio(glyph, disc),
            "glyph_share": len(glyph_pixels) / len(inside), "band": band.name()}


@pytest.mark.parametrize("state", list(STATES))
@pytest.mark.parametrize("size", TRAY_PX)
def test_the_icon_is_legible_on_light_and_dark_panels(qapp, state, size):
    for appearance, panels in PANELS.items():
        for panel in panels:
            found = measure(on_panel(state, size, panel))
            where = f"{state} at {size} px on a {appearance} panel {panel}: {found}"
            assert found["glyph"] >= MIN_CONTRAST, where
            assert found["glyph_share"] >= MIN_GLYPH_SHARE, where
            against_panel = max(contrast_ratio(found["disc"], panel),
                                contrast_ratio(found["band"], panel))
            assert against_panel >= MIN_CONTRAST, where


def test_the_renders_are_saved_for_both_panels(qapp):
    """One sheet per panel: each state at 16, 22 and 24 px, real size and 6x."""
    zoom, gap = 6, 6
    width = len(STATES) * sum(size * (zoom + 1) + 2 * gap for size in TRAY_PX)
    height = max(TRAY_PX) * zoom + 2 * gap
    for appearance, panels in PANELS.items():
        sheet = QImage(width, height, QImage.Format.Format_ARGB32)
        sheet.fill(QColor(panels[0]))
        painter = QPainter(sheet)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        x = gap
        for state in STATES:
            for size in TRAY_PX:
                render = on_panel(state, size, panels[0])
                painter.drawImage(QPointF(x, gap), render)
                x += size + gap
                painter.drawImage(QRectF(x, gap, size * zoom, size * zoom), render)
                x += size * zoom + gap
        painter.end()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        target = ARTIFACTS / f"tray-icon-{appearance}-panel.png"
        assert sheet.save(str(target))
        assert QImage(str(target)).pixelColor(1, 1) == QColor(panels[0])


def test_the_measure_fails_an_icon_without_its_own_contrast(qapp):
    """The check can fail: a grey glyph on a grey disc, no track, on a dark panel."""
    image = QImage(24, 24, QImage.Format.Format_ARGB32)
    image.fill(QColor("#323232"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor("#555555"))
    painter.drawEllipse(QRectF(0, 0, 24, 24))
    painter.setPen(QColor("#777777"))
    painter.drawText(QRectF(0, 0, 24, 24), Qt.AlignmentFlag.AlignCenter, "$")
    painter.end()
    found = measure(image)
    assert found["glyph"] < MIN_CONTRAST
    assert max(contrast_ratio(found["disc"], "#323232"),
               contrast_ratio(found["band"], "#323232")) < MIN_CONTRAST
