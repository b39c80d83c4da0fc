"""The explorer's first view measured in headless Chromium: how many labels it draws, the
smallest label's height on screen, labels overlapping, and labels outside the canvas, at the
zoom the page opens on, for each window size. The same ruler as the browser test
(tests/test_viz.py, on a 20,000-paper synthetic graph), here on a built graph's page.

    python bench/overview_labels.py graphs/iclr.html [--shot first-view.png]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support import LABEL_BOXES, overlapping  # noqa: E402

WINDOWS = ((1280, 800), (1366, 768), (1920, 1080))


def main(page_path: str, shot: str | None = None) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        print(f"{'window':>10} {'labels':>7} {'smallest px':>12} {'overlaps':>9} {'outside':>8}")
        for width, height in WINDOWS:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(Path(page_path).resolve().as_uri())
            page.wait_for_selector("body[data-state=ready]", state="attached", timeout=120_000)
            boxes = page.evaluate(LABEL_BOXES)
            print(f"{width}x{height:<5} {len(boxes):7} {min(b['px'] for b in boxes):12.1f} "
                  f"{len(overlapping(boxes)):9} {sum(not b['inside'] for b in boxes):8}")
            if shot and (width, height) == WINDOWS[0]:
                page.screenshot(path=shot)
            page.close()
        browser.close()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[sys.argv.index("--shot") + 1] if "--shot" in sys.argv else None)
