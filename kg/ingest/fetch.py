"""Fetch: download a venue's submissions from the public OpenReview API as JSON Lines for ``kg build``.

Pages through ``GET {api}/notes?invitation={venue}/-/Submission&offset=&limit=``
(API v2), one note per output line, as the API returns it (``kg build`` reads
OpenReview notes). Transient failures (connection errors, HTTP 429 and 5xx) are
retried with exponential backoff. An interrupted download resumes: notes already
in the output are kept and not fetched again, and a line cut short by the
interruption is dropped.

The server is not trusted. Every failure is one line naming the URL and what
was wrong; each answer is bounded in size and time, the whole fetch in pages
and time; a page that brings no new note ends the fetch; redirects are followed
only within the API's own origin; a note without a string id is skipped and
named. Lines are written ASCII-escaped, so no character a note holds (U+2028,
U+0085, a raw control byte) can split one when the file is read back.
"""
from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import KGError
from ..strings import counted

OPENREVIEW_API = "https://api2.openreview.net"
_RETRY_STATUS = {429, 500, 502, 503, 504}


@dataclass(frozen=True)
class Limits:
    """What one fetch may cost; every bound names itself when it is reached."""

    answer_bytes: int = 256 * 2**20  # one page of 1,000 notes is about 5 MB
    request_seconds: float = 120.0  # one answer, from request to last byte
    total_seconds: float = 4 * 3600.0
    pages: int = 10_000


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to the API's own scheme, host and port."""

    def __init__(self, api: str):
        self.origin = _origin(api)

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if _origin(newurl) != self.origin:
            raise KGError(f"{req.full_url}: redirected to {newurl[:200]}, outside {self._origin_text()}; not followed")
        return super().redirect_request(req, fp, code, msg, headers, newurl)

    def _origin_text(self) -> str:
        scheme, host, port = self.origin
        return f"{scheme}://{host}" + (f":{port}" if port else "")


def _existing_ids(output: Path) -> list[str]:
    """Ids of the notes already downloaded; a last line cut short by an interruption is removed."""
    if not output.exists():
        return []
    data = output.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    if len(complete) != len(data):
        output.write_bytes(complete)
    ids = []
    # Lines end at \n only, as JSON Lines says (str.splitlines would also end one at U+2028).
    for number, line in enumerate(complete.split(b"\n")[:-1], start=1):
        try:
            note_id = json.loads(line)["id"]
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError):
            note_id = None
        if not isinstance(note_id, str):
            raise KGError(f"{output}:{number}: not a downloaded note; move the file away to start afresh")
        ids.append(note_id)
    return ids


def _read_bounded(response, url: str, limits: Limits, deadline: float) -> bytes:
    declared = response.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > limits.answer_bytes:
        raise KGError(f"{url}: the answer is {int(declared):,} bytes, over the limit of {limits.answer_bytes:,}")
    chunks, size = [], 0
    while True:
        # read1 returns what one receive brings, so a server sending a byte at a time meets the deadline.
        chunk = response.read1(65536)
        if not chunk:
            if getattr(response, "length", None):  # the connection closed before the declared length
                raise http.client.IncompleteRead(b"".join(chunks), response.length)
            return b"".join(chunks)
        size += len(chunk)
        if size > limits.answer_bytes:
            raise KGError(f"{url}: the answer is over the limit of {limits.answer_bytes:,} bytes; stopped reading")
        if time.monotonic() > deadline:
            raise KGError(f"{url}: the answer took over {limits.request_seconds:g}s; run the same command "
                          "again to resume")
        chunks.append(chunk)


def _get_json(opener: urllib.request.OpenerDirector, url: str, *, retries: int, backoff: float, limits: Limits,
              sleep: Callable[[float], None], log: Callable[[str], None]) -> dict:
    for attempt in range(retries + 1):
        deadline = time.monotonic() + limits.request_seconds
        try:
            request = urllib.request.Request(url, headers={"Accept": "application/json"})
            with opener.open(request, timeout=max(1.0, min(60.0, limits.request_seconds))) as response:
                body = _read_bounded(response, url, limits, deadline)
            break
        except urllib.error.HTTPError as error:
            error.close()
            if error.code not in _RETRY_STATUS or attempt == retries:
                raise KGError(f"{url}: the server answered HTTP {error.code}") from None
            reason = f"HTTP {error.code}"
        except (urllib.error.URLError, http.client.HTTPException, OSError) as error:
            reason = str(getattr(error, "reason", None) or error) or type(error).__name__
            if attempt == retries:
                raise KGError(f"{url}: {reason[:200]}; run the same command again to resume") from None
        wait = backoff * 2**attempt
        log(f"{reason[:200]}; retrying in {wait:.1f}s")
        sleep(wait)
    try:
        page = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        kind = response.headers.get_content_type()
        raise KGError(f"{url}: the answer is not JSON ({kind}, {len(body):,} bytes)") from None
    if not isinstance(page, dict) or not isinstance(page.get("notes"), list):
        raise KGError(f"{url}: the answer is not an object with a 'notes' list")
    count = page.get("count")
    if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 0):
        raise KGError(f"{url}: the answer's 'count' is not a number of notes")
    return page


def fetch_openreview(
    venue: str,
    output: str | Path,
    *,
    api: str = OPENREVIEW_API,
    invitation: str | None = None,
    page_size: int = 1000,
    retries: int = 5,
    backoff: float = 2.0,
    limits: Limits = Limits(),
    sleep: Callable[[float], None] = time.sleep,
    log: Callable[[str], None] = lambda message: None,
) -> int:
    """Download every note of ``invitation`` (default ``{venue}/-/Submission``) into ``output``.

    Returns the number of notes in ``output`` when done.
    """
    if urllib.parse.urlsplit(api).scheme not in ("http", "https") or not urllib.parse.urlsplit(api).hostname:
        raise KGError(f"--api {api[:200]}: not an http or https URL")
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    seen = set(_existing_ids(output))
    if seen:
        log(f"resuming: {counted(len(seen), 'note')} already in {output}")
    invitation = invitation or f"{venue}/-/Submission"
    opener = urllib.request.build_opener(_SameOriginRedirects(api))
    stop_at = time.monotonic() + limits.total_seconds
    offset = len(seen)
    with output.open("a", encoding="utf-8") as out:
        for _ in range(limits.pages):
            query = urllib.parse.urlencode({"invitation": invitation, "offset": offset, "limit": page_size,
                                            "sort": "number:asc"})
            url = f"{api.rstrip('/')}/notes?{query}"
            page = _get_json(opener, url, retries=retries, backoff=backoff, limits=limits, sleep=sleep, log=log)
            notes, new = page["notes"], 0
            for position, note in enumerate(notes, start=offset):
                note_id = note.get("id") if isinstance(note, dict) else None
                if not isinstance(note_id, str) or not note_id:
                    log(f"{url}: note {position} has no id; skipped")
                elif note_id not in seen:
                    out.write(json.dumps(note, ensure_ascii=True) + "\n")
                    seen.add(note_id)
                    new += 1
            out.flush()
            offset += len(notes)
            count = page.get("count")
            log(counted(len(seen), "note") + (f" of {count:,}" if count is not None else ""))
            if len(notes) < page_size or (count is not None and offset >= count):
                return len(seen)
            if not new:
                log(f"{url}: the page brought no new note; the fetch ends here")
                return len(seen)
            if time.monotonic() > stop_at:
                raise KGError(f"{api}: the fetch took over {limits.total_seconds:g}s; {counted(len(seen), 'note')} "
                              f"in {output}; run the same command again to resume")
    raise KGError(f"{api}: over {limits.pages:,} pages without an end; {counted(len(seen), 'note')} in {output}; "
                  "check --api and --invitation")
