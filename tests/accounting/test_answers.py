"""The certified answers of ledgers, memoized and cached on disk (accounting.answers, issue 24)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from accounting import answers
from accounting.accountant import Accountant
from accounting.answers import Question, answer, caching
from accounting.errors import UnsupportedError
from accounting.mechanisms import AdditiveNoise, DistributedSum
from accounting.noise import DiscreteGaussian, Gaussian, Skellam

DELTA = 1e-6


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh cache folder and an empty memo (each test starts cold)."""
    folder = tmp_path / "answers"
    monkeypatch.setenv(answers.CACHE_DIR_ENV, str(folder))
    monkeypatch.delenv(answers.NO_CACHE_ENV, raising=False)
    answers.forget()
    yield folder
    answers.forget()


def _ledger() -> Accountant:
    """A lattice ledger answered by the exact PLD route in a fraction of a second."""
    return Accountant().compose(AdditiveNoise(DiscreteGaussian(3.0)), 4)


def _same(a: object, b: object) -> None:
    """The same answer to the bit: both ends' exact binary values, the route, the candidates."""
    assert a.lo._mpf_ == b.lo._mpf_  # type: ignore[attr-defined]
    assert a.hi._mpf_ == b.hi._mpf_  # type: ignore[attr-defined]
    assert a.route == b.route  # type: ignore[attr-defined]
    assert dict(a.candidates) == dict(b.candidates)  # type: ignore[attr-defined]


def _entries(folder: Path) -> dict[str, str]:
    import diskcache

    with diskcache.Cache(str(folder)) as cache:
        return {str(k): cache[k] for k in cache.iterkeys()}


def test_a_cached_answer_is_the_fresh_answer_bit_for_bit(store: Path) -> None:
    ledger = _ledger()
    fresh = ledger.epsilon(DELTA)  # the accountant itself, no cache
    first = answer(Question.of(ledger, DELTA))
    _same(first, fresh)
    assert len(_entries(store)) == 1
    answers.forget()  # a new process: the answer now comes from the disk
    from_disk = answer(Question.of(ledger, DELTA))
    _same(from_disk, fresh)
    assert float(from_disk) == float(fresh)
    with caching(False):
        answers.forget()
        _same(answer(Question.of(ledger, DELTA)), fresh)


def test_the_key_holds_what_determines_the_answer(store: Path) -> None:
    ledger = _ledger()
    base = Question.of(ledger, DELTA).key()
    others = [
        Question.of(ledger, 2e-6).key(),
        Question.of(ledger, DELTA, "rdp").key(),
        Question.of(Accountant(dps=30).compose(AdditiveNoise(DiscreteGaussian(3.0)), 4), DELTA).key(),
        Question.of(Accountant("add-remove").compose(AdditiveNoise(DiscreteGaussian(3.0)), 4), DELTA).key(),
        Question.of(Accountant().compose(AdditiveNoise(DiscreteGaussian(3.0)), 5), DELTA).key(),
        Question.of(Accountant().compose(AdditiveNoise(DiscreteGaussian(3.0), 2.0), 4), DELTA).key(),
    ]
    assert len({base, *others}) == 1 + len(others)
    assert Question.of(_ledger(), DELTA).key() == base  # the same ledger built again
    # the library's version and source are part of it: other code never serves its answers
    assert answers.code_digest().startswith("0.1.0+")


@pytest.mark.parametrize(
    "damage",
    [
        lambda entry: entry.replace('"hi"', '"lo_"', 1),  # the content edited (checksum fails)
        lambda entry: "not json at all",
        lambda entry: json.dumps({"body": "{}", "sha256": "0" * 64}),
        lambda entry: 42,
    ],
)
def test_a_corrupt_entry_is_recomputed_never_trusted(store: Path, damage: object) -> None:
    import diskcache

    ledger = _ledger()
    fresh = ledger.epsilon(DELTA)
    question = Question.of(ledger, DELTA)
    answer(question)
    key = question.key()
    with diskcache.Cache(str(store)) as cache:
        cache[key] = damage(cache[key])  # type: ignore[operator]
    answers.forget()
    _same(answer(question), fresh)
    assert _entries(store)[key] != damage  # written over with the recomputed answer
    answers.forget()
    _same(answer(question), fresh)


def test_a_valid_entry_under_another_key_is_not_trusted(store: Path) -> None:
    """The checksum binds an entry to its key: the answer of another ledger moved under this key
    (a valid entry, a wrong answer) is recomputed."""
    import diskcache

    small, large = _ledger(), Accountant().compose(AdditiveNoise(DiscreteGaussian(3.0)), 40)
    q_small, q_large = Question.of(small, DELTA), Question.of(large, DELTA)
    answer(q_small)
    answer(q_large)
    with diskcache.Cache(str(store)) as cache:
        cache[q_small.key()] = cache[q_large.key()]
    answers.forget()
    _same(answer(q_small), small.epsilon(DELTA))


def test_bypassing_the_cache_writes_nothing(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with caching(False):
        answer(Question.of(_ledger(), DELTA))
    assert not store.exists() or not _entries(store)
    answers.forget()
    monkeypatch.setenv(answers.NO_CACHE_ENV, "1")
    assert not answers.caching_enabled()
    answer(Question.of(_ledger(), DELTA))
    assert not store.exists() or not _entries(store)
    with caching(True):
        assert answers.caching_enabled()
    assert not answers.caching_enabled()  # the setting before the block is back


def test_a_refusal_is_remembered_as_a_refusal(store: Path) -> None:
    """A route that cannot account a ledger refuses again, from the cache, with its reason."""
    ledger = Accountant().compose(DistributedSum(Skellam(100.0, 100), users=4), 3)
    question = Question.of(ledger, DELTA, "pure")
    with pytest.raises(UnsupportedError) as first:
        answer(question)
    answers.forget()
    with pytest.raises(UnsupportedError) as again:
        answer(question)
    assert str(again.value) == str(first.value)
    assert "pure" in str(first.value)


def test_ledger_epsilon_is_the_accountants_float(store: Path) -> None:
    ledger = Accountant().compose(AdditiveNoise(Gaussian(2.0)), 3)
    eps = answers.ledger_epsilon(ledger.ledger, DELTA, ledger.neighbouring, ledger.dps)
    assert eps == float(ledger.epsilon(DELTA))
    assert answers.ledger_epsilon(ledger.ledger, DELTA, route="rdp") == float(ledger.epsilon(DELTA, "rdp"))


def test_an_unusable_cache_folder_only_costs_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(answers.CACHE_DIR_ENV, str(blocker / "answers"))
    answers.forget()
    ledger = _ledger()
    _same(answer(Question.of(ledger, DELTA)), ledger.epsilon(DELTA))
    answers.forget()


def test_set_caching_refuses_a_non_boolean() -> None:
    with pytest.raises(TypeError, match="enabled"):
        answers.set_caching("yes")  # type: ignore[arg-type]
