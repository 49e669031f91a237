"""Paints the JobCtrl app icon with Qt's QPainter and writes it as PNG, ICO and ICNS.

    python packaging/make_icon.py OUT_DIR            # jobctrl.png (256 px), .ico, .icns
    python packaging/make_icon.py --png-only PATH    # one 256 px PNG (resources/icons/)

The committed ``resources/icons/jobctrl.png`` is this script's output; the build writes
the platform formats next to its other build files. Qt ships the ICO and ICNS writers as
image-format plugins (``qico``, ``qicns``), so no other tool is needed.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QPointF, QRectF, Qt  # noqa: E402 - after the platform choice
from PySide6.QtGui import (  # noqa: E402
    QColor,
    QFont,
    QGuiApplication,
    QImage,
    QLinearGradient,
    QPainter,
    QPainterPath,
    QPen,
)

SIZES = (16, 24, 32, 48, 64, 128, 256)  # ICO frames; the PNG is the 256 one
ICNS_SIZES = (16, 32, 64, 128, 256, 512)
BACKGROUND_TOP = QColor("#2f6fde")
BACKGROUND_BOTTOM = QColor("#173d8c")
ACCENT = QColor("#4cd787")


def paint_icon(size: int) -> QImage:
    """A rounded blue tile with a white "J" and a green check: the pipeline's verdict."""
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    unit = size / 256.0
    tile = QRectF(8 * unit, 8 * unit, 240 * unit, 240 * unit)
    gradient = QLinearGradient(tile.topLeft(), tile.bottomLeft())
    gradient.setColorAt(0.0, BACKGROUND_TOP)
    gradient.setColorAt(1.0, BACKGROUND_BOTTOM)
    path = QPainterPath()
    path.addRoundedRect(tile, 52 * unit, 52 * unit)
    painter.fillPath(path, gradient)

    font = QFont("DejaVu Sans")
    font.setBold(True)
    font.setPixelSize(max(1, round(170 * unit)))
    painter.setFont(font)
    painter.setPen(QColor("white"))
    painter.drawText(QRectF(20 * unit, 4 * unit, 170 * unit, 236 * unit),
                     Qt.AlignmentFlag.AlignCenter, "J")

    pen = QPen(ACCENT, max(1.0, 26 * unit))
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    painter.setPen(pen)
    check = QPainterPath(QPointF(150 * unit, 168 * unit))
    check.lineTo(QPointF(178 * unit, 196 * unit))
    check.lineTo(QPointF(222 * unit, 132 * unit))
    painter.drawPath(check)
    painter.end()
    return image


def save(image: QImage, path: Path, fmt: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(path), fmt):
        raise RuntimeError(f"Qt could not write {path} as {fmt} (is the image-format plugin there?)")


def write_ico(path: Path) -> None:
    """Qt's ICO writer stores one frame per image: write the largest, which Windows scales.

    (QImageWriter has no multi-frame API in Python; 256 px PNG-compressed frames are what
    Windows Vista and later prefer anyway.)
    """
    save(paint_icon(256), path, "ICO")


def write_icns(path: Path) -> None:
    save(paint_icon(512), path, "ICNS")


def write_all(out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {"png": out_dir / "jobctrl.png", "ico": out_dir / "jobctrl.ico",
               "icns": out_dir / "jobctrl.icns"}
    save(paint_icon(256), written["png"], "PNG")
    write_ico(written["ico"])
    write_icns(written["icns"])
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", help="output folder (or the PNG path with --png-only)")
    parser.add_argument("--png-only", action="store_true")
    args = parser.parse_args(argv)
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # fonts need an app
    if args.png_only:
        save(paint_icon(256), Path(args.target), "PNG")
        print(args.target)
    else:
        for path in write_all(Path(args.target)).values():
            print(path)
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
