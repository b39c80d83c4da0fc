"""Fixtures shared by the test modules."""
from pathlib import Path

import pytest
from click.testing import CliRunner

from kg.cli import main
from support import FIXTURES

CHROMIUM = "/usr/bin/chromium"
# Debian's Chromium as root in a sandbox with a closed network: no sandbox, no background traffic.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def pytest_collection_modifyitems(items):
    """A test that drives the browser is marked ``browser``: ``-m "not browser"`` leaves them out."""
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium through playwright; the test is skipped, saying why, where either is missing."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def sample_build(tmp_path_factory) -> tuple[Path, str]:
    """The sample corpus (tests/fixtures/sample.txt) built once with the real CLI: the graph's
    path (the -o given) and what the build printed. Tests only read it."""
    stem = tmp_path_factory.mktemp("sample") / "sample"
    result = CliRunner().invoke(main, ["build", str(FIXTURES / "sample.txt"), "-o", str(stem)])
    assert result.exit_code == 0, result.output
    return stem, result.output


@pytest.fixture(scope="session")
def sample(sample_build) -> Path:
    """The sample graph's path (see ``sample_build``)."""
    return sample_build[0]
