"""`metanim reproduce ARTIFACT` end to end on the simulated server, at toy sizes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from metanim.cli import main

pytestmark = pytest.mark.slow
PNG = b"\x89PNG\r\n\x1a\n"


def _run(tmp_path: Path, artifact: str, *extra: str) -> str:
    # Toy sizes, each only where the artifact reads it (another option is refused).
    from metanim.analysis.reproduce import ARTIFACTS

    sizes = {"items": "3", "repeats": "2", "samples": "3", "episodes": "2"}
    args = ["reproduce", artifact, "--out", str(tmp_path)]
    for key, value in sizes.items():
        if key in ARTIFACTS[artifact].options:
            args += [f"--{key}", value]
    assert main([*args, *extra]) == 0
    return (tmp_path / f"{artifact}.md").read_text()


def test_figure3_runs_the_entrenchment_protocol(tmp_path: Path):
    md = _run(tmp_path, "figure3")
    assert "| state | action | belief |" in md and "mean residual" in md
    assert (tmp_path / "figure3.png").read_bytes()[:8] == PNG
    # Every debate ran its 3 rounds (consensus stop off): 2 agents x 4 answer rounds.
    from metanim.records import read_log

    log = next((tmp_path / "figure3").glob("mad-*.jsonl"))
    for record in read_log(log):
        assert len(record.decision.rounds) == 4
        assert record.decision.params["consensus_stop"] is False


def test_table5_grades_each_model(tmp_path: Path):
    md = _run(tmp_path, "table5", "--model", "sim-random", "--model-b", "sim-optimal")
    # The optimal model, graded on its own, per dataset; Wilson beside the paper's bootstrap.
    assert (
        "| nim | model\\_2 | 100.0% | 100.0% | [43.9%, 100.0%] | [100.0%, 100.0%] |" in md
    )  # Wilson of 3 of 3 (scipy: 0.4385)
    assert "| fibonacci | any correct | 100.0% | 100.0% |" in md
    assert "| outcome | fibonacci count | fibonacci % | nim count | nim % |" in md
    assert "mixed correction + persuasion" in md and "McNemar" in md
    assert "Models given on the command line" in md  # no hypothesis words for given models
    # The folder's report has the same seed 001 section, per dataset, with McNemar vs each
    # single model on that dataset.
    from metanim.analysis import render_report

    cross = render_report(tmp_path / "table5", write=False).cross
    assert {c.game for c in cross} == {"nim", "fibonacci"} and len(cross) == 4
    for c in cross:
        # Each model alone, and Self-Consistency (the first model's 3-sample vote).
        assert len(c.baselines) == 3 and all(b.game == c.game for b in c.baselines)
        assert sum(b.b.startswith("self_consistency[n=3]") for b in c.baselines) == 1
    plain = [c for c in cross if "temperatures" not in c.method]
    assert all(c.agents["model_2"] == (1.0, 1.0) for c in plain)
    same = [c for c in cross if "temperatures" in c.method]
    assert all(set(c.agents) == {"model_1", "model_2"} for c in same)


def test_identity_bias_with_a_sparse_topology(tmp_path: Path):
    md = _run(tmp_path, "identity-bias", "--peers", "1")
    assert '"peers": 1' in md and "IBC" in md
    # Each agent sees one peer: never two disagreeing peers.
    assert "| vanilla | 2 |" not in md and "| vanilla | 1 | 0 |" in md
    from metanim.analysis import render_report

    (bias,) = render_report(tmp_path / "identity-bias", write=False).identity_bias
    assert "anonymous_mad" in bias.anonymized and bias.low <= bias.ibc <= bias.high
    report = render_report(tmp_path / "identity-bias", write=False)
    # With one peer each, every conditioned cell is the single-peer case (1, 0).
    assert all(set(d.by_peers) == {"1,0"} for d in report.debate)
    assert "| n_D | n_A |" in report.markdown


def test_reproduce_all_announces_each_artifact_and_its_files_as_they_finish(
    tmp_path, monkeypatch, capsys
) -> None:
    """`reproduce all` says where it is: each artifact as it starts, each file as written."""
    from metanim.analysis import reproduce as module
    from metanim.cli import main

    done: list[str] = []

    def fake(name: str):
        def run(made):
            done.append(name)
            path = Path(made.opts.out) / f"{name}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(name)
            return [path]

        return run

    assert next(iter(module.ARTIFACTS)) == "table1"  # the registry the CLI reads
    saved = dict(module.ARTIFACTS)
    module.ARTIFACTS.clear()
    try:
        for name in ("one", "two"):
            hypothesis = module.Hypothesis({"agent": "sim-random"}, ("plays at random",))
            module.ARTIFACTS[name] = module.Artifact(
                name, f"paper {name}", "what", fake(name), hypothesis
            )
        assert main(["reproduce", "one", "--dry-run", "--out", str(tmp_path / "r")]) == 0
        assert "nothing was run or written" in capsys.readouterr().out
        assert not (tmp_path / "r").exists()
        assert module.reproduce("all", module.ReproduceOptions(out=str(tmp_path / "r")),
                                announce=print) == [tmp_path / "r" / "one.md", tmp_path / "r" / "two.md"]  # fmt: skip
        assert capsys.readouterr().out.splitlines() == [
            "[1/2] one: paper one, what", f"wrote {tmp_path / 'r' / 'one.md'}",
            "[2/2] two: paper two, what", f"wrote {tmp_path / 'r' / 'two.md'}",
        ]  # fmt: skip
        assert done == ["one", "two"]
    finally:
        module.ARTIFACTS.clear()
        module.ARTIFACTS.update(saved)


def test_an_option_the_artifact_does_not_read_is_refused_not_ignored(tmp_path: Path) -> None:
    from metanim.analysis.reproduce import ReproduceOptions, plan, reproduce

    out = str(tmp_path / "r")
    with pytest.raises(ValueError, match=r"table1 does not read --datasets \(read by figure3"):
        reproduce("table1", ReproduceOptions(out=out, datasets=["nofile.jsonl"]))
    with pytest.raises(ValueError, match=r"figure6 does not read --items"):
        plan("figure6", ReproduceOptions(out=out, items=3))
    assert not (tmp_path / "r").exists()
    # "all" passes each option to the artifacts that read it.
    lines = plan("all", ReproduceOptions(out=out, items=3, episodes=4))
    assert lines[0] == f"table1: repeats=5, items=3, its simulated agents; files into {out}/"
    assert lines[2] == f"figure6: episodes=4, its simulated agents; files into {out}/"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--model", "sim-optimall"], "--model: simulated model 'sim-optimall': unknown"),
        (["--model-b", "sim-xx"], "--model-b: simulated model 'sim-xx'"),
        (["--base-url", "ftp://x"], "--base-url: URL 'ftp://x' has the scheme 'ftp'"),
        (
            ["--agent-models", "sim-random|sim-optimal"],
            "--agent-models: names 2 model(s); give one per agent, 5",
        ),
    ],
)
def test_the_dry_run_refuses_what_the_run_would(flags: list[str], message: str, capsys) -> None:
    assert main(["reproduce", "acemad", "--dry-run", *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("metanim reproduce: error: ") and message in err and "\n" not in err


def test_a_scaled_down_run_says_its_options_and_a_strong_crowd_is_named(tmp_path: Path) -> None:
    md = _run(tmp_path, "table1")
    assert "Command: `metanim reproduce table1 --items 3 --repeats 2`; seed 0." in md
    # A crowd that answers everything leaves no challenging item: said, not a bare file error.
    from metanim.analysis.reproduce import ReproduceOptions, reproduce

    opts = ReproduceOptions(out=str(tmp_path / "s"), model="sim-optimal", items=3, repeats=1)
    with pytest.raises(ValueError, match=r"no challenging items: the single agent \(sim-optimal"):
        reproduce("acemad", opts)


def test_each_table_states_the_smallest_effect_its_sizes_detect(tmp_path: Path):
    from scipy.stats import norm

    md = _run(tmp_path, "table5")  # --items 3
    # Closed form: (z_0.975 + z_0.8) · sqrt(2 · 0.25 / n) with n = 3 items per arm.
    expected = (norm.ppf(0.975) + norm.ppf(0.8)) * math.sqrt(0.5 / 3)
    line = next(x for x in md.splitlines() if x.startswith("Power: "))
    assert line.startswith("Power: with 3 items")
    assert f"a difference of {100 * expected:.0f} points" in line
    assert "not detected at this size, not absent" in line
    assert md.index("Power: ") < md.index("## Configuration")
