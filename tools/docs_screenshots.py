"""Screenshots of built documentation pages with headless Chromium, to look at what readers see.

Usage (after ``make docs``)::

    python tools/docs_screenshots.py OUT_DIR results from_python algorithms/promp metaworld
    python tools/docs_screenshots.py OUT_DIR results --width 800 --height 9000

Each page ``docs/_build/html/<page>.html`` is drawn at ``--width`` CSS pixels in a window
``--height`` pixels tall (long pages need a tall window: Chromium's ``--screenshot`` captures the
window, not the whole page); the white space below the page's end (and the theme's footer) is
cut off, and the image is
split into ``--slice``-pixel-tall PNGs ``<page>_<width>_<i>.png`` that an image viewer shows at
full size. Needs ``chromium`` (or ``--browser``) and Pillow. Look for raw reStructuredText,
clipped figures and tables, and identifiers broken mid-word.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence

import numpy as np

HTML_DIR = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "_build", "html")


def screenshot(browser: str, html: str, path: str, width: int, height: int) -> None:
    """Draw ``html`` into the PNG ``path`` with a ``width x height`` window."""
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [browser, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
             f"--user-data-dir={profile}", f"--window-size={width},{height}",
             "--virtual-time-budget=5000", f"--screenshot={path}", f"file://{html}"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120,
        )


def crop_and_slice(path: str, prefix: str, slice_height: int) -> list[str]:
    """Cut the empty bottom of ``path`` off and split it into slices; returns their paths."""
    from PIL import Image

    with Image.open(path) as image:
        pixels = np.asarray(image.convert("RGB"))
    content = pixels[:, pixels.shape[1] * 3 // 10:]  # right of the navigation sidebar
    background = content[-1, -1]
    used = np.nonzero(np.any(content != background, axis=(1, 2)))[0]
    # The theme pins its footer to the window's bottom: the page ends where a long blank begins.
    gaps = np.nonzero(np.diff(used) > 400)[0]
    end = used[gaps[0]] if gaps.size else (used[-1] if used.size else pixels.shape[0])
    bottom = int(end) + 20
    paths = []
    for i, top in enumerate(range(0, bottom, slice_height)):
        out = f"{prefix}_{i}.png"
        Image.fromarray(pixels[top:min(bottom, top + slice_height)]).save(out, optimize=True)
        paths.append(out)
    return paths


def main(argv: Sequence[str] | None = None) -> list[str]:
    """Command-line entry point; returns the PNGs written."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", help="directory for the PNGs")
    parser.add_argument("pages", nargs="+", help="pages without .html, e.g. results, algorithms/promp")
    parser.add_argument("--html_dir", default=HTML_DIR, help="the built HTML documentation")
    parser.add_argument("--width", type=int, default=1280, help="window width in CSS pixels")
    parser.add_argument("--height", type=int, default=8000, help="window height in pixels")
    parser.add_argument("--slice", type=int, default=1400, help="height of each output PNG")
    parser.add_argument("--browser", default=None, help="default: chromium or google-chrome")
    args = parser.parse_args(argv)
    browser = args.browser or shutil.which("chromium") or shutil.which("google-chrome")
    if browser is None:
        parser.error("no headless browser found: install chromium or give --browser")
    for name in ("width", "height", "slice"):
        if getattr(args, name) < 100:
            parser.error(f"--{name} {getattr(args, name)}: must be an integer >= 100")
    os.makedirs(args.out_dir, exist_ok=True)
    written = []
    for page in args.pages:
        html = os.path.abspath(os.path.join(args.html_dir, f"{page}.html"))
        if not os.path.isfile(html):
            parser.error(f"page {page}: {html} does not exist (run `make docs` first)")
        prefix = os.path.join(args.out_dir, f"{page.replace('/', '_')}_{args.width}")
        full = f"{prefix}_full.png"
        screenshot(browser, html, full, args.width, args.height)
        written += crop_and_slice(full, prefix, args.slice)
        os.remove(full)
    print("\n".join(written))
    return written


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
