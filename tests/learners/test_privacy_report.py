"""One privacy report for every family, answered in the worker pool, cached, by an exact mode.

References are independent of the report: the accountant answering the saved ledgers itself
(``Accountant.epsilon``), and runs of the same config with the cache bypassed or another pool.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from accounting import answers
from accounting.accountant import Accountant
from learners import mab, privacy
from learners.errors import ConfigError, ParameterError
from learners.experiment import load_config, run_experiment, shipped_configs
from learners.results import SUMMARY_FILE, SUMMARY_TABLE_FILE
from tests.learners.test_experiment import tiny

DELTA = 1e-6


def config(**over: Any) -> dict[str, Any]:
    """Two chunks, two ε, a pure and a Skellam variant: small lattice ledgers, answered in ms."""
    base = tiny(
        horizon=2000,
        repetitions=2,
        chunk=1,
        epsilons=[0.5, 1.0],
        delta=DELTA,
        algorithms=[
            {"name": "dist-dp-se", "params": {"growth": 2}},
            {"name": "dist-rdp-se", "params": {"scaling": 10, "growth": 2}},
        ],
    )
    return {**base, **over}


def summary(folder: Path) -> dict[str, Any]:
    out: dict[str, Any] = json.loads((folder / SUMMARY_FILE).read_text(encoding="utf-8"))
    return out


# ---------------------------------------------------------------------------------------
# The exact mode
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode", ["auto", "cheap", "off", "pld", "rdp", "zcdp", "pure", "published", "published:skellam-akl"]
)
def test_the_exact_modes(mode: str) -> None:
    assert privacy.exact_mode(mode) == mode


@pytest.mark.parametrize("bad", ["never", "published:nobody", "", 3, None])
def test_a_bad_exact_mode_names_the_parameter(bad: object) -> None:
    with pytest.raises((ParameterError, TypeError)) as info:
        privacy.exact_mode(bad, "exact_privacy")
    assert "exact_privacy" in str(info.value)
    assert "cheap" in str(info.value)


def test_quick_runs_answer_by_cheap_routes_unless_told_otherwise() -> None:
    figure2 = shipped_configs()["figure2"]
    assert load_config(figure2).exact_privacy == "auto"
    assert load_config(figure2, quick=True).exact_privacy == "cheap"
    assert load_config(figure2, quick=True, exact_privacy="auto").exact_privacy == "auto"
    assert load_config(config(exact_privacy="off")).exact_privacy == "off"
    assert load_config(config(exact_privacy="rdp"), exact_privacy="pld").exact_privacy == "pld"
    # not part of the fingerprint: the units do not depend on it
    assert load_config(config(exact_privacy="off")).fingerprint == load_config(config()).fingerprint
    with pytest.raises(ConfigError) as info:
        load_config(config(exact_privacy="fast"))
    assert info.value.name == "exact_privacy"


@pytest.mark.slow
def test_cheap_answers_a_costly_ledger_by_the_published_bound_and_says_so() -> None:
    """Mode "cheap" answers exactly only a ledger the accountant estimates cheap; the costly one by
    Lemma 3 (without computing the exact answer), and the message names it."""
    learner = mab.make_learner("dist-rdp-se", 0.5, scaling=10, growth=2)
    small = Accountant()
    mab.batch_protocol(learner, 8, 3000).account(small)
    wide_learner = mab.make_learner("dist-rdp-se", 0.5, scaling=100, growth=4)
    wide = Accountant()
    mab.batch_protocol(wide_learner, 16384, 10**5).account(wide)
    assert small.pld_cost() <= privacy.CHEAP_BUDGET < wide.pld_cost()
    got = privacy.exact({8: small, 16384: wide}, DELTA, "cheap", fallback="published:skellam-akl")
    assert [route for _, _, route in got.batches] == ["pld", "published:skellam-akl"]
    assert got.batches[0][1] == float(small.epsilon(DELTA, route="pld"))
    assert got.batches[1][1] == float(wide.epsilon(DELTA, route="published:skellam-akl"))
    assert got.epsilon == max(e for _, e, _ in got.batches)
    assert "16384" in got.message
    assert "8," not in got.message
    # the enclosure is that of the worst ledger's ε
    lo, hi = got.enclosure
    assert lo <= got.epsilon == hi
    # a route asked for answers every ledger by that route, whatever its cost
    asked = privacy.exact({8: small, 16384: wide}, DELTA, "published", fallback="published:skellam-akl")
    assert asked.batches == (
        (8, float(small.epsilon(DELTA, route="published")), "published"),
        (16384, float(wide.epsilon(DELTA, route="published")), "published"),
    )
    assert asked.message == ""


@pytest.mark.slow
def test_a_cheap_run_caps_the_mab_headline_too() -> None:
    """A quick run (exact mode "cheap") answers the headline's "auto" ledgers within the same
    budget: a costly Skellam ledger by Lemma 3, and the message says so; without a budget, exactly."""
    learner = mab.make_learner("dist-rdp-se", 0.5, scaling=10, growth=2)
    small = Accountant()
    mab.batch_protocol(learner, 8, 3000).account(small)
    capped = mab.privacy_of(learner, {8: small}, DELTA, "auto", budget=0.0)
    lemma3 = "published:skellam-akl"
    assert capped.batches == ((8, float(small.epsilon(DELTA, lemma3)), lemma3),)
    assert "estimated to cost more than 0" in capped.message
    exact = mab.privacy_of(learner, {8: small}, DELTA, "auto")
    assert exact.batches == ((8, float(small.epsilon(DELTA)), "pld"),)
    assert exact.epsilon < capped.epsilon
    with pytest.raises(ParameterError, match="budget"):
        mab.privacy_of(learner, {8: small}, DELTA, "auto", budget=-1.0)


def test_exact_off_leaves_the_exact_block_out(tmp_path: Path) -> None:
    out = run_experiment(load_config(config(), exact_privacy="off"), tmp_path / "off", progress=False)
    data = summary(out)
    assert data["exact_privacy"] == "off"
    for r in data["results"]:
        assert r["privacy"]["exact"] is None
        assert r["privacy"]["claimed"] is not None
    table = (out / SUMMARY_TABLE_FILE).read_text(encoding="utf-8")
    assert "Exact privacy is off" in table
    assert "| off |" in table


# ---------------------------------------------------------------------------------------
# The same answers: with or without the cache, here or in the pool, fresh or resumed
# ---------------------------------------------------------------------------------------


def _count_answers(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The δ of every answer the accountant computes from now on (an empty ledger's, which checks a
    route name, left out)."""
    calls: list[float] = []
    original = Accountant.epsilon

    def counted(self: Accountant, delta: float, route: str = "auto") -> Any:
        if self.ledger:
            calls.append(delta)
        return original(self, delta, route)

    monkeypatch.setattr(Accountant, "epsilon", counted)
    return calls


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The config run here, with the cache bypassed: every answer computed afresh."""
    answers.forget()
    out = tmp_path_factory.mktemp("ref") / "out"
    return run_experiment(load_config(config()), out, progress=False, cache=False)


@pytest.mark.slow
def test_the_exact_answers_are_the_same_with_and_without_the_cache(
    reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(answers.CACHE_DIR_ENV, str(tmp_path / "cache"))
    answers.forget()
    first = run_experiment(load_config(config()), tmp_path / "a", progress=False, cache=True)
    assert (tmp_path / "cache").is_dir()
    answers.forget()  # a new process: every answer now comes from the disk
    calls = _count_answers(monkeypatch)
    second = run_experiment(load_config(config()), tmp_path / "b", progress=False, cache=True)
    assert calls == []  # nothing was computed again
    for out in (first, second):
        assert (out / SUMMARY_FILE).read_bytes() == (reference / SUMMARY_FILE).read_bytes()
        assert (out / SUMMARY_TABLE_FILE).read_bytes() == (reference / SUMMARY_TABLE_FILE).read_bytes()
    # and the answers are the accountant's own on the saved ledgers
    monkeypatch.undo()
    for r in summary(first)["results"]:
        exact = r["privacy"]["exact"]
        for name, (_, eps, route) in zip(exact["ledgers"], exact["batches"], strict=True):
            ledger = Accountant.from_json((first / name).read_text(encoding="utf-8"))
            assert eps == float(ledger.epsilon(exact["delta"] or 0.5, route=route))


@pytest.mark.slow
def test_reports_are_answered_in_the_worker_pool(reference: Path, tmp_path: Path) -> None:
    """With two worker processes the reports are computed in them, beside the units: the parent
    answers nothing, and the outputs are the same bytes as a run here."""
    answers.forget()
    out = run_experiment(load_config(config()), tmp_path / "pool", workers=2, progress=False, cache=False)
    assert not answers._memo  # the parent process answered no ledger
    for name in (SUMMARY_FILE, SUMMARY_TABLE_FILE, "regret.csv"):
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name


@pytest.mark.slow
def test_a_resumed_run_answers_from_the_cache(
    reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that finds every unit done recomputes no unit and, its answers cached, no answer."""
    monkeypatch.setenv(answers.CACHE_DIR_ENV, str(tmp_path / "cache"))
    answers.forget()
    out = run_experiment(load_config(config()), tmp_path / "r", progress=False)
    answers.forget()
    seen: list[bool] = []
    calls = _count_answers(monkeypatch)
    run_experiment(load_config(config()), out, progress=False, on_unit=lambda u, c: seen.append(c))
    assert len(seen) == len(load_config(config()).units())
    assert not any(seen)
    assert calls == []
    assert (out / SUMMARY_FILE).read_bytes() == (reference / SUMMARY_FILE).read_bytes()


@pytest.mark.slow
def test_the_progress_bar_counts_units_and_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tqdm

    totals: list[tuple[int, int]] = []
    original = tqdm.tqdm

    class Recording(original):  # type: ignore[misc, valid-type]
        def close(self) -> None:
            totals.append((self.total, self.n))
            super().close()

    monkeypatch.setattr(tqdm, "tqdm", Recording)
    loaded = load_config(config(exact_privacy="off"))
    run_experiment(loaded, tmp_path / "bar", progress=True)
    groups = {(u.panel, u.algorithm, u.epsilon) for u in loaded.units()}
    assert totals == [(len(loaded.units()) + len(groups), len(loaded.units()) + len(groups))]


# ---------------------------------------------------------------------------------------
# Every family honours privacy_route
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_mab_headline_follows_privacy_route(reference: Path, tmp_path: Path) -> None:
    """The reference answers its headline by the default "auto" route; "published" answers it by
    Lemma 3 on each ledger, and the exact block stays the exact one."""
    run = load_config(config(privacy_route="published:skellam-akl"))
    out = run_experiment(run, tmp_path / "published", progress=False)
    checked = 0
    for r, ref in zip(summary(out)["results"], summary(reference)["results"], strict=True):
        if r["algorithm"] != "dist-rdp-se":
            continue
        assert {route for _, _, route in r["privacy"]["batches"]} == {"published:skellam-akl"}
        assert {route for _, _, route in ref["privacy"]["batches"]} == {"pld"}
        assert r["privacy"]["exact"] == ref["privacy"]["exact"]  # the exact block does not follow it
        assert r["privacy"]["epsilon"] > ref["privacy"]["epsilon"]
        for name, (_, eps, _) in zip(r["privacy"]["exact"]["ledgers"], r["privacy"]["batches"], strict=True):
            ledger = Accountant.from_json((out / name).read_text(encoding="utf-8"))
            assert eps == float(ledger.epsilon(DELTA, route="published:skellam-akl"))
            checked += 1
    assert checked
