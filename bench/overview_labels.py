"""The explorer's views measured in headless Chromium: for the map, its largest topic, a task's,
a dataset's and a paper's neighbourhood, and a task's comparison and a dataset's leaderboard at
full width, at each window size: labels drawn, the smallest label's height on screen, labels
overlapping, labels outside the canvas, and (for the tables) cells outside their view. The same
rule as the browser tests (tests/support.py: illegible), here on a built graph's page, from disk
or as `kg serve` sends it.

    python bench/overview_labels.py graphs/NAME.html [--serve graphs/NAME] [--shots DIR] [--task ID] [--dataset ID]

The task and dataset are the first of each kind among the topics' members, the largest topic
first, unless given; the paper, the task's first.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support import LABEL_BOXES, overlapping  # noqa: E402

WINDOWS = ((1280, 800), (1920, 1080))
CELLS_OUTSIDE = """() => {
  const view = document.querySelector(".kg-wide-table").getBoundingClientRect();
  return [...document.querySelectorAll("#kg-wide td")].filter((c) => {
    const box = c.getBoundingClientRect();
    return box.left < view.left - 1 || box.right > view.right + 1 || box.width < 30;
  }).length;
}"""


def chosen(page_path: Path) -> dict:
    """The ids of the views measured, read from the page's map."""
    data = json.loads(re.search(r'<script id="kg-data" type="application/json">(.*?)</script>',
                                page_path.read_text(encoding="utf-8"), re.S).group(1))
    members = [member for topic in data["explorer"]["map"] for member, _ in topic["members"]]
    first = lambda kind: next(m for m in members if m.startswith(kind + "/"))  # noqa: E731
    return {"topic": data["explorer"]["map"][0]["id"], "task": first("task"), "dataset": first("dataset")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("page", type=Path)
    parser.add_argument("--serve", type=Path, metavar="GRAPH", help="measure the page kg serve sends for GRAPH instead")
    parser.add_argument("--shots", type=Path, metavar="DIR", help="save each view at 1280x800 as DIR/VIEW.png")
    parser.add_argument("--task", help="the task whose neighbourhood and comparison are measured")
    parser.add_argument("--dataset", help="the dataset whose neighbourhood and leaderboard are measured")
    args = parser.parse_args()
    ids = {**chosen(args.page), **{kind: given for kind, given in (("task", args.task), ("dataset", args.dataset)) if given}}
    from playwright.sync_api import sync_playwright

    running = None
    if args.serve:
        from kg import serve
        running = serve.start(serve.make_app(args.serve), port=0)
    url = running.url + "/" if running else args.page.resolve().as_uri()
    views = {"map": "() => kgExplorer.showOverview()", "topic": f"() => kgExplorer.openTopic('{ids['topic']}')",
             "task": f"() => kgExplorer.focus('{ids['task']}', 1)", "dataset": f"() => kgExplorer.focus('{ids['dataset']}', 1)",
             "paper": None, "comparison": f"() => {{ location.hash = 'comparison={ids['task']}'; }}",
             "leaderboard": f"() => {{ location.hash = 'leaderboard={ids['dataset']}'; }}"}
    print(f"{'source':>7} {'window':>10} {'view':>12} {'labels':>7} {'smallest px':>12} {'overlaps':>9} {'outside':>8}  drawn")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        for width, height in WINDOWS:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(url)
            page.wait_for_selector("body[data-state=ready]", state="attached", timeout=120_000)
            for view, draw in views.items():
                if view == "paper":  # the task's first paper, from its panel's view
                    task = (f"fetch('/entity/{ids['task']}.json?related=0').then((r) => r.json())" if running
                            else f"kgExplorer.view('{ids['task']}')")
                    paper = page.evaluate(f"async () => (await {task}).papers[0].id")
                    draw = f"() => kgExplorer.focus('{paper}', 1)"
                page.evaluate(draw)
                page.wait_for_timeout(400)
                if view in ("comparison", "leaderboard"):
                    page.wait_for_selector("body[data-view=board]", state="attached")
                    outside = page.evaluate(CELLS_OUTSIDE)
                    print(f"{'served' if running else 'disk':>7} {width}x{height:<5} {view:>12} {'':>7} {'':>12} {'':>9} "
                          f"{outside:8}  {page.text_content('#kg-overview')[:90]}")
                else:
                    boxes = page.evaluate(LABEL_BOXES)
                    print(f"{'served' if running else 'disk':>7} {width}x{height:<5} {view:>12} {len(boxes):7} "
                          f"{min(b['px'] for b in boxes):12.1f} {len(overlapping(boxes)):9} "
                          f"{sum(not b['inside'] for b in boxes):8}  {page.text_content('#kg-overview')[:90]}")
                if args.shots and (width, height) == WINDOWS[0]:
                    args.shots.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(args.shots / f"{view}.png"))
                if view in ("comparison", "leaderboard"):
                    page.go_back()
                    page.wait_for_timeout(300)
            page.close()
        browser.close()
    if running:
        running.stop()


if __name__ == "__main__":
    main()
