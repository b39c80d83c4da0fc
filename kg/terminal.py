"""The terminal: what every ``kg`` command shares in reading its words and printing its answer.

An answer holds what the data says (titles, labels, sentences), so it reaches the terminal escaped
(:func:`say`); kg's own errors are one line, never a traceback (:class:`Group`); names that start
with "-" are arguments, not unknown options (:class:`TakesNames`); a build's extraction shows a bar
on a terminal (:class:`Progress`); the graph a command reads is the one named with -g, or the only one
under graphs/ (:data:`graph_option`).
"""
from __future__ import annotations

import itertools
import json
import sys
import uuid
from pathlib import Path

import click

from .errors import KGError
from .strings import printable, printable_json


#: Where 'kg build' writes graphs by default, and where the other commands look for one.
GRAPHS = Path("graphs")


def _only_graph(ctx, param, value):
    """The graph a command reads: the one given, or else the only graph under graphs/."""
    from .store import GRAPH_SUFFIXES, INDEX_SUFFIX

    if value is not None:
        return value
    stems = sorted({path.with_suffix("") for path in GRAPHS.glob("*")
                    if path.suffix in GRAPH_SUFFIXES and not path.name.startswith(".")
                    and not path.name.endswith(INDEX_SUFFIX)})
    if len(stems) == 1:
        click.echo(f"Using {stems[0]}, the only graph under {GRAPHS}/ (-g GRAPH to choose another).", err=True)
        return str(stems[0])
    if not stems:
        raise click.UsageError(f"No graph given and none under {GRAPHS}/: build one with "
                               f"'kg build ABSTRACTS -o {GRAPHS}/NAME', or name one with -g GRAPH.")
    raise click.UsageError(f"Several graphs under {GRAPHS}/ ({', '.join(stem.name for stem in stems)}); "
                           f"choose one with -g, e.g. -g {stems[0]}.")


graph_option = click.option(
    "--graph", "-g", metavar="GRAPH", callback=_only_graph,
    help="The graph: the -o path given to 'kg build' (graphs/NAME) or an .nt/.ttl/.jsonld file. "
         "Default: the only graph under graphs/.")


def format_option(*choices: str):
    """The --format option of a command that prints an answer: a table to read, or its JSON twin."""
    meanings = {"table": "text to read", "csv": "CSV rows", "json": "the same answer whole, as JSON, for programs"}
    return click.option("--format", "fmt", type=click.Choice(choices), default=choices[0], show_default=True,
                        help="How to print the answer: " + "; ".join(f"{c}, {meanings[c]}" for c in choices) + ".")


class Group(click.Group):
    """Turns kg's own errors into one clear line and exit status 1, instead of a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KGError as error:  # its message may quote the data (a name, a record): escaped like the rest
            click.secho(f"Error: {printable(str(error))}", fg="red", err=True)
            sys.exit(1)


def say(text: str, *, escaped_format: bool = False, nl: bool = True) -> None:
    """Print ``text``, which holds what the data says (titles, labels, sentences, table cells), with
    its control characters shown as ``\\x..`` (:func:`kg.strings.printable`): a title may carry
    terminal escapes (a disguised link, a colour change), and they must not reach the terminal.
    Every command prints its answer through here. Text in a format that escapes C0 controls its own
    way (``escaped_format``: JSON, N-Triples), where ``\\x..`` would break it, gets DEL and the C1
    controls escaped its way (:func:`kg.strings.printable_json`).
    """
    click.echo(printable_json(text) if escaped_format else printable(text), nl=nl)


class TakesNames(click.Command):
    """A command whose arguments are paper ids or entity names, which may start with "-" (OpenReview
    ids do: -zBN5sBzdvr). A word that starts with "-" but is none of the command's options is read as
    an argument instead of refused as an unknown option; one that is an option's own name (-h, -g)
    is given after "--", which ends the options (click's rule, kept).
    """

    def parse_args(self, ctx, args):
        return super().parse_args(ctx, arguments_last(args, self._values_taken(ctx)))

    def _values_taken(self, ctx) -> dict[str, int]:
        """Each option name of this command, and how many values follow it (0 for a flag)."""
        taken = {}
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                count = 0 if param.is_flag or param.count else param.nargs
                taken.update(dict.fromkeys([*param.opts, *param.secondary_opts], count))
        return taken


def arguments_last(args: list[str], taken: dict[str, int]) -> list[str]:
    """``args`` as options with their values, then "--", then the arguments: every word that is not an
    option's name (``--name=value`` included) or its value, in order, and every word after a "--".

    >>> arguments_last(["-zBN5", "-g", "graphs/x", "--format=json"], {"-g": 1, "--format": 1, "-h": 0})
    ['-g', 'graphs/x', '--format=json', '--', '-zBN5']
    >>> arguments_last(["-g", "g", "--", "-h"], {"-g": 1, "-h": 0}), arguments_last(["-g"], {"-g": 1})
    (['-g', 'g', '--', '-h'], ['-g'])
    """
    options, arguments = [], []
    words = iter(args)
    for word in words:
        if word == "--":
            arguments.extend(words)
            break
        name = word.partition("=")[0] if word.startswith("--") else word
        if name not in taken:
            arguments.append(word)
            continue
        options.append(word)
        if "=" not in word:  # its values follow it (a missing one is left for click to report)
            options.extend(itertools.islice(words, taken[name]))
    return options + (["--", *arguments] if arguments else [])


def print_answer(answer, fmt: str, *, mark=None, **text) -> None:
    """``answer`` as JSON (its ``as_json``) or as text (its ``as_text``, given ``text``), escaped
    (:func:`say`). ``mark`` styles the mentions an answer marks (bold on a terminal): its own escape
    codes are put in after the escaping, at tokens no data holds (drawn afresh for each answer)."""
    if fmt == "json":
        say(json.dumps(answer.as_json(), indent=2, ensure_ascii=False), escaped_format=True)
        return
    if mark is None:
        say(answer.as_text(**text))
        return
    opening, closing = f"[{uuid.uuid4().hex}", f"{uuid.uuid4().hex}]"
    escaped = printable(answer.as_text(mark=lambda mention: opening + mention + closing, **text))
    styled = mark("\0").split("\0")  # the codes before and after a styled text
    click.echo(escaped.replace(opening, styled[0]).replace(closing, styled[1]))


class Progress:
    """A build's progress: on a terminal, a bar with a time estimate while a stage counts its items
    (:meth:`update`); a line per stage as it ends (:meth:`stage`), on a terminal and piped alike.
    Nothing with ``quiet``; no bar for fewer than 50 items."""

    def __init__(self, label: str, *, quiet: bool = False):
        self.label, self.quiet, self.bar = label, quiet, None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self._close()

    def update(self, done: int, total: int) -> None:
        if self.quiet or total < 50 or not sys.stderr.isatty():
            return
        if self.bar is None:
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr, show_pos=True)
            self.bar.__enter__()
        self.bar.update(done - self.bar.pos)

    def stage(self, line: str) -> None:
        self._close()
        if not self.quiet:
            click.echo(line, err=True)

    def _close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
