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
import gzip
import html
import json
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from metanim.analysis.ratings import RATINGS_NOTE, Ratings, table_facts
from metanim.games import make_game
from metanim.records import (
    distinguishing_labels,
    identity_hash,
    iter_logs,
    log_identity,
    read_records,
)
from metanim.solver import winning_moves

VIEWER_FILE = "viewer.html"
MAX_ITEMS = 2000


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
def _latest(rows: Iterator[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last line per id: a resumed run appends a rerun after the failed attempt."""
    out: dict[Any, dict[str, Any]] = {}
    for k, row in enumerate(rows):
        out[row.get("id", k)] = row
    return list(out.values())


def _method_of(spec: str) -> str:
    return spec.split("@", 1)[0]


def _episode(row: dict[str, Any]) -> dict[str, Any]:
    game_name = str(row.get("game", "?"))
    params = row.get("game_params") or {}
    try:
        game = make_game(game_name, **params)
    except Exception:
        game = None
    moves = []
    for m in row.get("moves") or []:
        winning, board = (
            _position(game, m.get("state"), m.get("move")) if game is not None else (None, None)
        )
        grade = grade_move(
            m.get("move"), str(m.get("status")), m.get("position"), winning, m.get("optimal")
        )
        moves.append(
            {
                "ply": m.get("ply"),
                "actor": m.get("actor"),
                "state": _state_text(game, m.get("state")),
                "board": board,
                "position": m.get("position"),
                "status": m.get("status"),
                "move": m.get("move"),
                "grade": grade,
                "winning": winning,
                **_usage(m),
                "decision": _decision(m.get("decision")),
            }
        )
    totals = row.get("agent_totals") or {}
    opp = row.get("opponent_totals") or {}
    return {
        "kind": "episode",
        "id": row.get("id"),
        "index": row.get("index"),
        "game": str(row.get("setting") or game_name),
        "seat": row.get("seat"),
        "outcome": row.get("status"),
        "end": row.get("end_reason"),
        "start": row.get("start_state"),
        "start_outcome": row.get("start_outcome"),
        "board": {"game": game_name, "params": params} if game is not None else None,
        "methods": {
            "agent": _method_of(str(row.get("agent", "agent"))),
            "opponent": _method_of(str(row.get("opponent", "opponent"))),
        },
        "agent": row.get("agent"),
        "opponent": row.get("opponent"),
        "plies": row.get("plies"),
        "calls": int(totals.get("calls", 0) or 0) + int(opp.get("calls", 0) or 0),
        "tokens": sum(
            int(t.get(k, 0) or 0)
            for t in (totals, opp)
            for k in ("prompt_tokens", "completion_tokens")
        ),
        "cost": float(totals.get("cost_usd", 0) or 0) + float(opp.get("cost_usd", 0) or 0),
        "error": row.get("error"),
        "moves": moves,
    }


def _usage(row: dict[str, Any]) -> dict[str, Any]:
    """What one move or decision line spent, and its error, as a page move shows them."""
    return {
        "calls": row.get("calls", 0),
        "tokens": int(row.get("prompt_tokens", 0) or 0) + int(row.get("completion_tokens", 0) or 0),
        "cost": row.get("cost_usd", 0.0),
        "latency": row.get("latency_s"),
        "error": row.get("error"),
    }


def _state_text(game: Any, state_json: Any) -> str:
    if game is not None:
        try:
            return str(game.describe(game.validate_state(state_json)))
        except Exception:
            pass
    return json.dumps(state_json)


def _evaluation(row: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    decision = row.get("decision") or {}
    optimal = row.get("optimal_move")
    correct = row.get("correct")
    winning = [str(optimal)] if optimal is not None else None
    status = str(row.get("status"))
    answer = row.get("answer")
    task = decision.get("task") or {}
    state, board, drawn = "?", None, None
    if task.get("game") and "state" in task:
        try:
            game_of_task = make_game(task["game"], **(task.get("params") or {}))
            state = _state_text(game_of_task, task["state"])
            board = {"game": task["game"], "params": task.get("params") or {}}
            drawn = _position(game_of_task, task["state"], answer)[1]
        except Exception:
            state = json.dumps(task["state"])
    game = str(row.get("game", "?"))
    variant = str(row.get("variant", ""))
    if variant not in ("", "normal"):
        game = f"{game} ({variant})"
    # A dataset record is a critical state: its one optimal move is the only winning one,
    # so the evaluation's own verdict (`correct`) is the grade.
    grade = grade_move(answer, status, "N", None, correct)
    method = str(config.get("method") or decision.get("method") or "?")
    move = {
        "ply": 0,
        "actor": "agent",
        "state": state,
        "board": drawn,
        "position": "N",
        "status": status,
        "move": answer,
        "grade": grade,
        "winning": winning,
        **_usage(row),
        "decision": _decision(decision),
    }
    outcome = "failed" if correct is None else ("correct" if correct else "wrong")
    return {
        "kind": "decision",
        "id": row.get("id"),
        "record": row.get("record_id"),
        "repeat": row.get("repeat", 0),
        "game": game,
        "stratum": row.get("stratum"),
        "outcome": outcome,
        "board": board,
        "methods": {"agent": method},
        "calls": move["calls"],
        "tokens": move["tokens"],
        "cost": float(move["cost"] or 0),
        "error": row.get("error"),
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


def _decision(decision: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the page shows of a method's decision record."""
    if not decision:
        return None
    rounds = decision.get("rounds") or []
    agents = {a for r in rounds if isinstance(r, dict) for a in r}
    samples = [
        s
        for s in decision.get("samples") or []
        if s.get("agent") in agents
        and (s.get("answer_text") is not None or s.get("payload") or s.get("error"))
    ]
    # Methods number their rounds differently (DReaMAD from 0, MPD and AceMAD from 1):
    # the k-th recorded round is the k-th round number the debaters' samples carry.
    numbers = sorted({int(s.get("round") or 0) for s in samples})
    if len(numbers) != len(rounds):
        numbers = list(range(len(rounds)))
    row_of = {n: k for k, n in enumerate(numbers)}
    # Each cell of the rounds x agents grid: the answer and the reasoning behind it
    # (the last answer-bearing sample of that agent in that round).
    cells: dict[str, dict[str, Any]] = {}
    for s in samples:
        row = row_of.get(int(s.get("round") or 0))
        if row is None:
            continue
        key = f"{row}|{s.get('agent')}"
        cells[key] = {
            "answer": s.get("answer_text"),
            "phase": s.get("phase"),
            "reasoning": _reasoning(s.get("text"), s.get("payload")),
            "error": s.get("error") or s.get("reason"),
        }
    calls = [
        {
            "agent": c.get("agent"),
            "phase": c.get("phase"),
            "round": c.get("round"),
            "attempt": c.get("attempt"),
            "model": c.get("model"),
            "messages": c.get("messages"),
            "texts": c.get("texts"),
            "tokens": sum((c.get("usage") or {}).values()),
            "cost": c.get("cost_usd"),
            "latency": c.get("latency_s"),
            "cached": c.get("cached"),
        }
        for c in decision.get("calls") or []
    ]
    usage = decision.get("usage") or {}
    return {
        "method": decision.get("method"),
        "params": decision.get("params"),
        "status": decision.get("status"),
        "answer": decision.get("answer_text"),
        "rounds": rounds,
        "round_numbers": numbers,
        "cells": cells,
        "extra": decision.get("extra") or {},
        "tie_breaks": decision.get("tie_breaks") or [],
        "calls": calls,
        "tokens": sum(int(v or 0) for v in usage.values()),
        "cost": decision.get("cost_usd"),
        "error": decision.get("error"),
    }


def collect_runs(results_dir: str | Path) -> list[dict[str, Any]]:
    """Every run (one log) under the folder, as the page's records."""
    results_dir = Path(results_dir)

    runs, identities = [], {}
    for path, kind, config in iter_logs(results_dir):
        rows = _latest(read_records(path))
        # The report's run identity and label, so a run reads the same on both pages.
        identity = log_identity(config, rows, kind)
        identities[identity_hash(identity)] = identity
        if kind == "episodes":
            items = sorted((_episode(r) for r in rows), key=lambda e: (e["game"], e["index"] or 0))
        else:
            items = sorted(
                (_evaluation(r, config) for r in rows),
                key=lambda e: (e["game"], str(e["record"]), e["repeat"] or 0),
            )
        runs.append(
            {
                "id": path.stem,
                "file": str(path.relative_to(results_dir)),
                "kind": kind,
                "label": identity_hash(identity),
                "config": {k: v for k, v in config.items() if v not in (None, {}, [])},
                "items": items,
            }
        )
    labels = distinguishing_labels(identities)
    for run in runs:
        run["label"] = labels[run["label"]]
    return runs


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


def _interned(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The runs with every call's messages and replies, and each decision's parameters
    and extra record (as JSON), as indices into one table of distinct texts: a run's
    calls resend the same system prompt, rules and elicited knowledge thousands of
    times, and the page would unpack and parse each copy."""
    table: dict[str, int] = {}

    def intern(text: Any) -> int:
        return table.setdefault(str(text or ""), len(table))

    out = []
    for run in runs:
        items = []
        for item in run["items"]:
            moves = []
            for move in item["moves"]:
                decision = move.get("decision")
                if decision:
                    calls = [
                        {
                            **call,
                            "messages": [
                                [m.get("role"), intern(m.get("content"))]
                                for m in call.get("messages") or []
                            ],
                            "texts": [intern(t) for t in call.get("texts") or []],
                        }
                        for call in decision["calls"]
                    ]
                    shared = {
                        k: intern(json.dumps(decision.get(k), sort_keys=True, default=str))
                        for k in ("extra", "params")
                    }
                    move = {**move, "decision": {**decision, "calls": calls, **shared}}
                moves.append(move)
            items.append({**item, "moves": moves})
        out.append({**run, "items": items})
    return {"runs": out, "texts": list(table)}


def _packed(runs: list[dict[str, Any]]) -> str:
    data = _interned(runs)
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str).encode()
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def _page(
    title: str,
    report: str,
    runs: list[dict[str, Any]],
    links: str,
    *,
    ratings: dict[str, Any] | None = None,
    run_reports: str = "",
) -> str:
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
        "__DATA__": _packed(runs),
    }
    return re.sub("|".join(parts), lambda m: parts[m.group(0)], template)


def write_viewer(
    report: Report, results_dir: str | Path, *, max_items: int = MAX_ITEMS
) -> list[Path]:
    """Write `viewer.html` (and, for a big folder, one page per run); return the pages."""
    results_dir = Path(results_dir)
    runs = collect_runs(results_dir)
    title = f"MetaNIM results: {results_dir.name or results_dir}"
    body = markdown_html(report.markdown, results_dir)
    extra = {
        "ratings": _ratings_meta(report),
        "run_reports": run_reports_html(results_dir, [(r["file"], r["label"]) for r in runs]),
    }
    index = results_dir / VIEWER_FILE
    if sum(len(r["items"]) for r in runs) <= max_items:
        index.write_text(_page(title, body, runs, "", **extra), encoding="utf-8")
        return [index]
    folder = results_dir / "viewer"
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.html"):  # pages of an earlier, differently split report
        old.unlink()
    pages, links = [], []
    back = f"<p><a href='../{VIEWER_FILE}'>← all runs</a></p>"
    for run in runs:
        # A run bigger than a page itself is cut into parts of `max_items` records.
        parts = [run["items"][k : k + max_items] for k in range(0, len(run["items"]), max_items)]
        unit = "episodes" if run["kind"] == "episodes" else "decisions"
        for n, items in enumerate(parts or [[]], start=1):
            suffix = f"-part{n}" if len(parts) > 1 else ""
            page = folder / f"{run['id']}{suffix}.html"
            part = f" (part {n} of {len(parts)})" if len(parts) > 1 else ""
            page.write_text(
                _page(f"{title} — {run['label']}{part}", "", [{**run, "items": items}], back),
                encoding="utf-8",
            )
            pages.append(page)
            links.append(
                f"<li><a href='viewer/{html.escape(page.name)}'>{html.escape(run['label'])}"
                f"{part}</a> — {len(items)} {unit} "
                f"<span class='muted'>({html.escape(run['file'])})</span></li>"
            )
    index_links = (
        "<section id='runlinks'><h2>Runs</h2><p class='note'>Too many records for one page "
        f"(over {max_items:,}): one page per run.</p><ul>{''.join(links)}</ul></section>"
    )
    index.write_text(_page(title, body, [], index_links, **extra), encoding="utf-8")
    return [index, *pages]


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
