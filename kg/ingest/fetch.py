"""Fetch: download a venue's submissions from the public OpenReview API as JSON Lines for ``kg build``.

Pages through ``GET {api}/notes?invitation={venue}/-/Submission&offset=&limit=``
(API v2), one note per output line, exactly as the API returns it (``kg build``
reads OpenReview notes). Transient failures (connection errors, HTTP 429 and
5xx) are retried with exponential backoff. An interrupted download resumes:
notes already in the output are kept and not fetched again, and a line cut
short by the interruption is dropped.
"""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

from ..errors import KGError
from ..strings import counted

OPENREVIEW_API = "https://api2.openreview.net"
_RETRY_STATUS = {429, 500, 502, 503, 504}


def _existing_ids(output: Path) -> list[str]:
    """Ids of the notes already downloaded; a last line cut short by an interruption is removed."""
    if not output.exists():
        return []
    data = output.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    if len(complete) != len(data):
        output.write_bytes(complete)
    ids = []
    for number, line in enumerate(complete.decode("utf-8").splitlines(), start=1):
        try:
            ids.append(json.loads(line)["id"])
        except (json.JSONDecodeError, KeyError, TypeError):
            raise KGError(f"{output}:{number}: not a downloaded note; move the file away to start afresh") from None
    return ids


def _get_json(url: str, *, retries: int, backoff: float, sleep: Callable[[float], None],
              log: Callable[[str], None]) -> dict:
    for attempt in range(retries + 1):
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": "application/json"}),
                                        timeout=60) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            if error.code not in _RETRY_STATUS or attempt == retries:
                raise KGError(f"OpenReview answered HTTP {error.code} for {url}") from None
            reason = f"HTTP {error.code}"
        except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
            if attempt == retries:
                raise KGError(f"Could not reach OpenReview ({error}); run the same command again to resume") from None
            reason = str(getattr(error, "reason", error))
        wait = backoff * 2**attempt
        log(f"{reason}; retrying in {wait:.1f}s")
        sleep(wait)
    raise AssertionError("unreachable")


def fetch_openreview(
    venue: str,
    output: str | Path,
    *,
    api: str = OPENREVIEW_API,
    invitation: str | None = None,
    page_size: int = 1000,
    retries: int = 5,
    backoff: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
    log: Callable[[str], None] = lambda message: None,
) -> int:
    """Download every note of ``invitation`` (default ``{venue}/-/Submission``) into ``output``.

    Returns the number of notes in ``output`` when done.
    """
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    seen = set(_existing_ids(output))
    if seen:
        log(f"resuming: {counted(len(seen), 'note')} already in {output}")
    invitation = invitation or f"{venue}/-/Submission"
    offset = len(seen)
    with output.open("a", encoding="utf-8") as out:
        while True:
            query = urllib.parse.urlencode({"invitation": invitation, "offset": offset, "limit": page_size,
                                            "sort": "number:asc"})
            page = _get_json(f"{api.rstrip('/')}/notes?{query}", retries=retries, backoff=backoff, sleep=sleep, log=log)
            notes = page.get("notes")
            if not isinstance(notes, list):
                raise KGError(f"Unexpected answer from {api}: no 'notes' list")
            for note in notes:
                if note.get("id") not in seen:
                    out.write(json.dumps(note, ensure_ascii=False) + "\n")
                    seen.add(note.get("id"))
            out.flush()
            offset += len(notes)
            log(counted(len(seen), "note") + (f" of {page['count']:,}" if "count" in page else ""))
            if len(notes) < page_size or ("count" in page and offset >= page["count"]):
                return len(seen)
