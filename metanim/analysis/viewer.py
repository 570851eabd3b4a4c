"""`viewer.html`: one self-contained page per results folder, beside report.md.

The page needs no network and no server: CSS and JavaScript are inline (from
`viewer_template.html`), the plots are PNG data URIs, and the records travel as
gzip-compressed JSON in base64 that the browser unpacks with `DecompressionStream`.
`metanim report --serve` serves the folder on 127.0.0.1 for browsers that restrict
`file://` pages (`serve_viewer`).

The page holds everything report.md says: report.md itself, rendered (`markdown_html`:
every table sortable, every plot inlined), each run's own report behind a click, and a
sortable leaderboard of the ratings with their intervals. It reads the same logs as the
report (`metanim.records.iter_logs`, the last line per id) and adds what the report has
no room for: every episode and decision, each move graded by the solver and its board
drawn (an SVG per game, up to `BOARD_LIMITS`), each debate as rounds x agents with every
answer and its reasoning, DReaMAD's elicited prompts, AceMAD's weights, the judge's
verdicts, and every call with its messages, tokens and cost. Search, filters, sorting,
the open record and a side-by-side of two runs live in the URL's hash, so a view can be
shared.

A folder with more than `max_items` episodes and decisions gets an index page
(`viewer.html`: the report, the leaderboard, one link per run) and one page per run
under `viewer/`.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import re
import zlib
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from itertools import islice
from pathlib import Path
from typing import Any, Protocol

import orjson

from metanim.agents import Decision
from metanim.analysis.ratings import RATINGS_NOTE, Ratings, table_facts
from metanim.games import make_game
from metanim.records import (
    DecisionRecord,
    EpisodeRecord,
    decision_of,
    distinguishing_labels,
    game_key,
    identity_hash,
    iter_logs,
    log_identity,
    log_ids,
    numbered_log,
)
from metanim.solver import winning_moves

VIEWER_FILE = "viewer.html"
MAX_ITEMS = 2000
#: A run's records on the pages (the first, in log order); the rest are in its log.
PAGE_RECORDS = 2000


class Report(Protocol):
    """What the page reads of a folder's report (`metanim.analysis.report.Report` has it):
    the page renders the report, so it never imports the module that builds one."""

    markdown: str
    ratings: Ratings | None


#: Grades of one move, from the solver (docs/analysis.md, "The viewer").
GRADES = ("optimal", "no winning move", "losing", "fallback", "no move", "ungraded")


# ----------------------------------------------------------------------- grading
def _position(
    game: Any, state_json: Any, move_text: Any
) -> tuple[list[str] | None, dict[str, Any] | None]:
    """The winning moves' texts at a logged state, and what the page draws of it: the
    state, the move played and the winning moves as the game's own move values (a heap
    and a count, a row and its pins, a square). (None, None) if the state does not load."""
    try:
        state = game.validate_state(state_json)
        winning = sorted(winning_moves(game, state), key=game.move_text)
    except Exception:  # an unknown or old state format: show the move ungraded
        return None, None
    played = None
    if move_text is not None:
        try:
            played = game.parse_move(str(move_text), state)
        except Exception:  # an illegal or unparsable answer is shown, not drawn
            played = None
    return [game.move_text(m) for m in winning], {"s": state_json, "m": played, "w": winning}


def grade_move(
    move: str | None,
    status: str,
    position: str | None,
    winning: Sequence[str] | None,
    logged_optimal: bool | None = None,
) -> str:
    """One move's grade against the solver.

    In an impartial game a move from an N-position either keeps the win (a winning move:
    "optimal") or hands it to the opponent ("losing"); there is no tier between. From a
    P-position no move wins ("no winning move"; the arena counts any move there as
    optimal). A random move the method did not choose is "fallback"; no legal move at
    all (forfeit, unparsable, infrastructure error) is "no move". Where the state cannot
    be solved again (`winning` None), the verdict the arena logged decides, else
    "ungraded".
    """
    if move is None:
        return "no move"
    if status == "fallback":
        return "fallback"
    if position == "P" or (winning is not None and not winning):
        return "no winning move"
    if winning is not None:
        return "optimal" if move in winning else "losing"
    if logged_optimal is None:
        return "ungraded"
    return "optimal" if logged_optimal else "losing"


# ------------------------------------------------------------------------ records
def _method_of(spec: str) -> str:
    return spec.split("@", 1)[0]


@functools.lru_cache(maxsize=64)
def _game(name: str, params: str) -> Any:
    """A game of a logged setting (None if this code cannot make it), made once."""
    try:
        return make_game(name, **json.loads(params))
    except Exception:
        return None


@functools.lru_cache(maxsize=65_536)
def _graded(name: str, params: str, state: str, move: str | None) -> tuple[Any, Any, str]:
    """(winning moves, board, state text) of one logged position and move, solved once:
    the episodes of a run pass through the same positions again and again."""
    game = _game(name, params)
    state_json = json.loads(state)
    if game is None:
        return None, None, _state_text(None, state_json)
    winning, board = _position(game, state_json, move)
    return winning, board, _state_text(game, state_json)


def _episode(row: EpisodeRecord) -> dict[str, Any]:
    params = json.dumps(row.game_params, sort_keys=True)
    game = _game(row.game, params)
    moves = []
    for m in row.moves:
        winning, board, state_text = _graded(row.game, params, json.dumps(m.state), m.move)
        grade = grade_move(m.move, m.status, m.position, winning, m.optimal)
        moves.append(
            {
                "ply": m.ply,
                "actor": m.actor,
                "state": state_text,
                "board": board,
                "position": m.position,
                "status": m.status,
                "move": m.move,
                "grade": grade,
                "winning": winning,
                **_usage(m),
                "decision": _decision(m.decision),
            }
        )
    totals, opp = row.agent_totals, row.opponent_totals
    return {
        "kind": "episode",
        "id": row.id,
        "index": row.index,
        "game": row.setting,
        "seat": row.seat,
        "outcome": row.status,
        "end": row.end_reason,
        "start": row.start_state,
        "start_outcome": row.start_outcome,
        "board": {"game": row.game, "params": row.game_params} if game is not None else None,
        "methods": {"agent": _method_of(row.agent), "opponent": _method_of(row.opponent)},
        "agent": row.agent,
        "opponent": row.opponent,
        "plies": row.plies,
        "calls": totals.calls + opp.calls,
        "tokens": sum(t.prompt_tokens + t.completion_tokens for t in (totals, opp)),
        "cost": totals.cost_usd + opp.cost_usd,
        "error": row.error,
        "moves": moves,
    }


def _usage(row: Any) -> dict[str, Any]:
    """What one move or decision record spent, and its error, as a page move shows them."""
    return {
        "calls": row.calls,
        "tokens": row.prompt_tokens + row.completion_tokens,
        "cost": row.cost_usd,
        "latency": row.latency_s,
        "error": row.error,
    }


def _state_text(game: Any, state_json: Any) -> str:
    if game is not None:
        try:
            return str(game.describe(game.validate_state(state_json)))
        except Exception:
            pass
    return json.dumps(state_json)


def _evaluation(row: DecisionRecord, config: dict[str, Any]) -> dict[str, Any]:
    decision = decision_of(row.decision)
    winning = [row.optimal_move] if row.optimal_move is not None else None
    task = decision.task if decision is not None else {}
    state, board, drawn = "?", None, None
    if task.get("game") and "state" in task:
        game_of_task = _game(
            str(task["game"]), json.dumps(task.get("params") or {}, sort_keys=True)
        )
        if game_of_task is not None:
            state = _state_text(game_of_task, task["state"])
            board = {"game": task["game"], "params": task.get("params") or {}}
            drawn = _position(game_of_task, task["state"], row.answer)[1]
        else:
            state = json.dumps(task["state"])
    # A dataset record is a critical state: its one optimal move is the only winning one,
    # so the evaluation's own verdict (`correct`) is the grade.
    grade = grade_move(row.answer, row.status, "N", None, row.correct)
    method = str(config.get("method") or (decision.method if decision is not None else "?"))
    move = {
        "ply": 0,
        "actor": "agent",
        "state": state,
        "board": drawn,
        "position": "N",
        "status": row.status,
        "move": row.answer,
        "grade": grade,
        "winning": winning,
        **_usage(row),
        "decision": _decision(decision),
    }
    outcome = "failed" if row.correct is None else ("correct" if row.correct else "wrong")
    return {
        "kind": "decision",
        "id": row.id,
        "record": row.record_id,
        "repeat": row.repeat,
        "game": game_key(row.game, row.variant),
        "stratum": row.stratum,
        "outcome": outcome,
        "board": board,
        "methods": {"agent": method},
        "calls": move["calls"],
        "tokens": move["tokens"],
        "cost": float(move["cost"] or 0),
        "error": row.error,
        "moves": [move],
    }


_REASONING = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)


def _reasoning(text: str | None, payload: dict[str, Any] | None = None) -> str:
    """The `reasoning` field of a JSON reply, else the whole reply.

    A structured report (AceMAD's belief and prediction) shows as the prose before its
    JSON block and the distributions, most likely answer first.
    """
    if isinstance(payload, dict) and any(isinstance(v, dict) for v in payload.values()):
        prose = _REASONING.sub("", text or "").strip()
        dists = [
            f"{name}: "
            + ", ".join(
                f"{k} {100 * float(p):.0f}%" for k, p in sorted(d.items(), key=lambda x: -x[1])
            )
            for name, d in payload.items()
            if isinstance(d, dict)
        ]
        return "\n".join([prose, *dists] if prose else dists)
    if not text:
        return ""
    for block in [*_REASONING.findall(text), text]:
        try:
            data = json.loads(block)
        except (json.JSONDecodeError, TypeError):
            continue
        if isinstance(data, dict) and isinstance(data.get("reasoning"), str):
            return data["reasoning"]
    return text


def _decision(decision: Decision | dict[str, Any] | None) -> dict[str, Any] | None:
    """What the page shows of a method's decision record."""
    decision = decision_of(decision)
    if decision is None:
        return None
    rounds = decision.rounds
    agents = {a for r in rounds for a in r}
    samples = [
        s
        for s in decision.samples
        if s.agent in agents and (s.answer_text is not None or s.payload or s.error)
    ]
    # Methods number their rounds differently (DReaMAD from 0, MPD and AceMAD from 1):
    # the k-th recorded round is the k-th round number the debaters' samples carry.
    numbers = sorted({s.round for s in samples})
    if len(numbers) != len(rounds):
        numbers = list(range(len(rounds)))
    row_of = {n: k for k, n in enumerate(numbers)}
    # Each cell of the rounds x agents grid: the answer and the reasoning behind it
    # (the last answer-bearing sample of that agent in that round).
    cells: dict[str, dict[str, Any]] = {}
    for s in samples:
        row = row_of.get(s.round)
        if row is None:
            continue
        cells[f"{row}|{s.agent}"] = {
            "answer": s.answer_text,
            "phase": s.phase,
            "reasoning": _reasoning(s.text, s.payload),
            "error": s.error or s.reason,
        }
    calls = [
        {
            "agent": c.agent,
            "phase": c.phase,
            "round": c.round,
            "attempt": c.attempt,
            "model": c.model,
            "messages": c.messages,
            "texts": c.texts,
            "tokens": c.usage.prompt_tokens + c.usage.completion_tokens,
            "cost": c.cost_usd,
            "latency": c.latency_s,
            "cached": c.cached,
        }
        for c in decision.calls
    ]
    return {
        "method": decision.method,
        "params": decision.params,
        "status": decision.status,
        "answer": decision.answer_text,
        "rounds": rounds,
        "round_numbers": numbers,
        "cells": cells,
        "extra": decision.extra,
        "tie_breaks": [t.model_dump(mode="json") for t in decision.tie_breaks],
        "calls": calls,
        "tokens": decision.usage.prompt_tokens + decision.usage.completion_tokens,
        "cost": decision.cost_usd,
        "error": decision.error,
    }


class _Run:
    """One log as the page lists it: where it is, its kind, config and label."""

    def __init__(self, path: Path, kind: str, config: dict[str, Any], results_dir: Path) -> None:
        self.path, self.kind, self.config = path, kind, config
        self.identity = log_identity(config, path, kind)
        self.file = str(path.relative_to(results_dir))
        self.label = identity_hash(self.identity)
        last: dict[str, int] = {}
        for number, rid in log_ids(path):
            last[rid] = number
        self.keep = set(last.values())  # the line numbers of each id's last record

    @property
    def size(self) -> int:
        return len(self.keep)

    def items(self) -> Iterator[dict[str, Any]]:
        """The page's records of this log, the last of each id, in the log's order."""
        for number, record in numbered_log(self.path, kind=self.kind):
            if number not in self.keep:
                continue
            if isinstance(record, EpisodeRecord):
                yield _episode(record)
            else:
                yield _evaluation(record, self.config)

    def head(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": self.path.stem,
            "file": self.file,
            "kind": self.kind,
            "label": self.label,
            "config": {k: v for k, v in self.config.items() if v not in (None, {}, [])},
            "items": items,
        }


def _runs(results_dir: Path) -> list[_Run]:
    runs = [_Run(path, kind, config, results_dir) for path, kind, config in iter_logs(results_dir)]
    # The report's run identity and label, so a run reads the same on both pages.
    labels = distinguishing_labels({r.label: r.identity for r in runs})
    for run in runs:
        run.label = labels[run.label]
    return runs


def collect_runs(results_dir: str | Path) -> list[dict[str, Any]]:
    """Every run (one log) under the folder, as the page's records (all in memory: for a
    folder that fits one page; `write_viewer` streams bigger ones)."""
    return [run.head(sorted(run.items(), key=_sort_key)) for run in _runs(Path(results_dir))]


# ------------------------------------------------------------------------ report
#: The Markdown dialect of report.md: CommonMark with GFM tables; raw HTML is shown as
#: text (labels and replies are data, never markup).
@functools.cache
def _markdown() -> Any:
    from markdown_it import MarkdownIt  # here: only a page needs it

    return MarkdownIt("commonmark", {"html": False}).enable("table")


_IMG = re.compile(r'<img src="([^"]*)" alt="([^"]*)" ?/?>')


def _data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()


def markdown_html(text: str, folder: Path | None = None, *, sections: bool = True) -> str:
    """Report Markdown as the page's HTML: every table sortable and scrolling inside its
    card, each image inlined as a data URI (a file missing from `folder` is named
    instead), and with `sections` each `##` section collapsible (open) below the title."""
    out = _markdown().render(text)
    out = out.replace("<table>", "<div class='tablewrap'><table class='summary sortable'>")
    out = out.replace("</table>", "</table></div>")

    def image(m: re.Match[str]) -> str:
        src, alt = html.unescape(m.group(1)), m.group(2)
        path = (folder / src) if folder is not None and "/" not in src else None
        if path is None or not path.is_file():
            return f"<span class='muted'>[image {html.escape(src)} not found]</span>"
        return f"<figure><img alt='{alt}' src='{_data_uri(path)}'><figcaption>{alt}</figcaption></figure>"

    out = _IMG.sub(image, out)
    if not sections:
        return out
    # The title (which folder) stays, below the page's own header.
    out = out.replace("<h1>", "<p class='rtitle'>", 1).replace("</h1>", "</p>", 1)
    head, *parts = out.split("<h2>")
    body = "".join(
        f"<details class='rsec' open><summary><h2>{title}</h2></summary>{rest}</details>"
        for title, rest in (part.split("</h2>", 1) for part in parts)
    )
    return head + body


def run_reports_html(results_dir: Path, runs: Sequence[tuple[str, str]]) -> str:
    """Each run's own report (`<log>.report.md`: rows per seat, start N/P, failures, the
    run's settings), one closed section per run; `runs` holds (log path, label)."""
    parts = []
    for file, label in runs:
        path = (results_dir / file).with_suffix(".report.md")
        if not path.is_file():
            continue
        body = markdown_html(path.read_text(encoding="utf-8"), sections=False)
        parts.append(
            f"<details class='runreport'><summary><b>{html.escape(label)}</b> "
            f"<span class='muted'>{html.escape(path.name)}</span></summary>{body}</details>"
        )
    if not parts:
        return ""
    return (
        "<section id='runreports'><h2>Run reports</h2><p class='note'>Each run's own "
        "report, as written beside its log: rows per seat and start (N/P), failures, the "
        "run's settings. Click a run to open it.</p>" + "".join(parts) + "</section>"
    )


def _ratings_meta(report: Report) -> dict[str, Any] | None:
    if report.ratings is None or not report.ratings.tables:
        return None
    # Through pydantic's JSON: NaN (no rating, no accuracy) becomes null, which JSON has.
    data = json.loads(report.ratings.model_dump_json(exclude={"players"}))
    data["note"] = RATINGS_NOTE.format(
        sigma=report.ratings.prior_sigma, bootstrap=report.ratings.bootstrap
    )
    data["facts"] = [table_facts(t) for t in report.ratings.tables]
    return data


# -------------------------------------------------------------------------- page
#: Boards larger than these are described in text, not drawn.
BOARD_LIMITS = {"stones": 60, "cells": 400}


class _Texts:
    """One table of distinct texts for a page: every call's messages and replies, and each
    decision's parameters and extra record (as JSON), become indices into it: a run's calls
    resend the same system prompt, rules and elicited knowledge thousands of times, and
    the page would unpack and parse each copy."""

    def __init__(self) -> None:
        self.table: dict[str, int] = {}

    def __call__(self, text: Any) -> int:
        return self.table.setdefault(str(text or ""), len(self.table))

    def item(self, item: dict[str, Any]) -> dict[str, Any]:
        """A page record with its decisions' texts as indices."""
        moves = []
        for move in item["moves"]:
            decision = move.get("decision")
            if decision:
                calls = [
                    {
                        **call,
                        "messages": [
                            [m.get("role"), self(m.get("content"))]
                            for m in call.get("messages") or []
                        ],
                        "texts": [self(t) for t in call.get("texts") or []],
                    }
                    for call in decision["calls"]
                ]
                shared = {
                    k: self(
                        orjson.dumps(
                            decision.get(k), option=orjson.OPT_SORT_KEYS, default=str
                        ).decode()
                    )
                    for k in ("extra", "params")
                }
                move = {**move, "decision": {**decision, "calls": calls, **shared}}
            moves.append(move)
        return {**item, "moves": moves}


def _sort_key(item: dict[str, Any]) -> tuple[Any, ...]:
    if item["kind"] == "episode":
        return (item["game"], item["index"] or 0)
    return (item["game"], str(item["record"]), item["repeat"] or 0)


def _packed(runs: list[tuple[dict[str, Any], Iterable[dict[str, Any]]]]) -> Iterator[str]:
    """The page's records as gzip + base64 JSON, `{"runs": [...], "texts": [...]}`, in
    pieces of base64 text.

    `runs` holds (a run's head, its records): each record is encoded the moment it is
    made (its texts interned) and the run's records sorted by their keys; the JSON is then
    compressed and encoded a piece at a time, so a page holds its records' JSON bytes
    once, never the records' objects nor whole copies of the page.
    """
    texts = _Texts()
    pieces = [b'{"runs":[']
    for n, (head, items) in enumerate(runs):
        # orjson: the same compact UTF-8 JSON as json.dumps(separators, ensure_ascii=False),
        # in a fraction of its time on a page of thousands of records.
        encoded = sorted(
            ((_sort_key(item), orjson.dumps(texts.item(item), default=str)) for item in items),
            key=lambda pair: pair[0],
        )
        pieces.append((b"," if n else b"") + orjson.dumps({**head, "items": []})[:-3] + b"[")
        pieces += [(b"," if k else b"") + data for k, (_, data) in enumerate(encoded)]
        pieces.append(b"]}")
    pieces.append(b'],"texts":' + orjson.dumps(list(texts.table)) + b"}")
    # gzip (wbits 31) with no time in its header: the same records give the same page.
    gz = zlib.compressobj(6, zlib.DEFLATED, 31)
    rest = b""
    for piece in [*(gz.compress(p) for p in pieces), gz.flush()]:
        rest += piece
        cut = len(rest) - len(rest) % 3  # base64 encodes whole 3-byte groups
        if cut:
            yield base64.b64encode(rest[:cut]).decode("ascii")
            rest = rest[cut:]
    if rest:
        yield base64.b64encode(rest).decode("ascii")


def _page(
    path: Path,
    title: str,
    report: str,
    runs: list[tuple[dict[str, Any], Iterable[dict[str, Any]]]],
    links: str,
    *,
    ratings: dict[str, Any] | None = None,
    run_reports: str = "",
) -> None:
    """Write one page to `path`: the template with its parts, the records streamed in."""
    template = resources.files("metanim.analysis").joinpath("viewer_template.html").read_text()
    meta = {
        "title": title,
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "grades": list(GRADES),
        "limits": BOARD_LIMITS,
        "ratings": ratings,
    }
    parts = {
        "__TITLE__": html.escape(title),
        "__REPORT__": "<section id='report'><h2 class='top'>Report</h2><p class='note'>report.md, "
        f"as written beside this page; click a heading to fold it.</p>{report}</section>"
        if report
        else "",
        "__RUNREPORTS__": run_reports,
        "__LINKS__": links,
        "__META__": json.dumps(meta, default=str).replace("</", "<\\/"),
    }
    head, tail = template.split("__DATA__")
    with path.open("w", encoding="utf-8") as out:
        out.write(re.sub("|".join(parts), lambda m: parts[m.group(0)], head))
        for piece in _packed(runs):
            out.write(piece)
        out.write(re.sub("|".join(parts), lambda m: parts[m.group(0)], tail))


def write_viewer(
    report: Report,
    results_dir: str | Path,
    *,
    max_items: int = MAX_ITEMS,
    page_records: int | None = PAGE_RECORDS,
) -> list[Path]:
    """Write `viewer.html` (and, for a big folder, one page per run); return the pages.

    A folder of more than `max_items` records is written a page at a time: each run's
    records stream from its log into parts of `max_items` (sorted within the part), and
    each record is encoded as it is made, so memory holds one part's JSON however big
    the folder. A run's pages hold its first `page_records` records in log order (None:
    all); the index says how many more its log holds (the exports have every one).
    """
    results_dir = Path(results_dir)
    runs = _runs(results_dir)
    title = f"MetaNIM results: {results_dir.name or results_dir}"
    body = markdown_html(report.markdown, results_dir)
    extra = {
        "ratings": _ratings_meta(report),
        "run_reports": run_reports_html(results_dir, [(r.file, r.label) for r in runs]),
    }
    index = results_dir / VIEWER_FILE
    folder = results_dir / "viewer"
    for old in folder.glob("*.html"):  # pages of an earlier, differently split report
        old.unlink()
    shown = {
        run.file: run.size if page_records is None else min(run.size, page_records) for run in runs
    }
    if sum(shown.values()) <= max_items:
        pages = [(run.head([]), islice(run.items(), shown[run.file])) for run in runs]
        _page(index, title, body, pages, _left_out(runs, shown), **extra)
        return [index]
    folder.mkdir(exist_ok=True)
    pages_written, links = [], []
    back = f"<p><a href='../{VIEWER_FILE}'>← all runs</a></p>"
    for run in runs:
        # A run bigger than a page itself is cut into parts of `max_items` records.
        count = max(1, -(-shown[run.file] // max_items))
        unit = "episodes" if run.kind == "episodes" else "decisions"
        stream = islice(run.items(), shown[run.file])
        for n in range(1, count + 1):
            size = min(max_items, shown[run.file] - (n - 1) * max_items)
            suffix = f"-part{n}" if count > 1 else ""
            page = folder / f"{run.path.stem}{suffix}.html"
            part = f" (part {n} of {count})" if count > 1 else ""
            records = [(run.head([]), islice(stream, size))]
            _page(page, f"{title} — {run.label}{part}", "", records, back)
            pages_written.append(page)
            links.append(
                f"<li><a href='viewer/{html.escape(page.name)}'>{html.escape(run.label)}"
                f"{part}</a> — {size} {unit} "
                f"<span class='muted'>({html.escape(run.file)})</span></li>"
            )
    index_links = (
        "<section id='runlinks'><h2>Runs</h2><p class='note'>Too many records for one page "
        f"(over {max_items:,}): one page per run.</p><ul>{''.join(links)}</ul>"
        f"{_left_out(runs, shown)}</section>"
    )
    _page(index, title, body, [], index_links, **extra)
    return [index, *pages_written]


def _left_out(runs: list[_Run], shown: dict[str, int]) -> str:
    """A note naming the runs whose pages hold only their first records."""
    cut = [run for run in runs if shown[run.file] < run.size]
    if not cut:
        return ""
    items = "".join(
        f"<li>{html.escape(run.label)}: the first {shown[run.file]:,} of {run.size:,} records "
        f"<span class='muted'>({html.escape(run.file)})</span></li>"
        for run in cut
    )
    return (
        "<section id='leftout'><p class='note'>These runs' pages hold their first records "
        "only (in log order); the report's tables count every record, and every one is in "
        "the log and in <code>metanim report --export parquet</code> (<code>--page-records "
        f"all</code> pages them all):</p><ul>{items}</ul></section>"
    )


# ------------------------------------------------------------------------ serving
class _FolderHandler(SimpleHTTPRequestHandler):
    """Files of one results folder; no request log on the terminal."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve_viewer(results_dir: str | Path, *, port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server for the folder on 127.0.0.1 (`port` 0 picks a free one), not yet
    serving: call `serve_forever`. Some browsers restrict what a `file://` page may do;
    served, the page and its run pages work everywhere."""
    folder = Path(results_dir)
    if not (folder / VIEWER_FILE).is_file():
        raise ValueError(f"no {VIEWER_FILE} in {folder}: run `metanim report {folder}` first")
    handler = functools.partial(_FolderHandler, directory=str(folder))
    return ThreadingHTTPServer(("127.0.0.1", port), handler)
