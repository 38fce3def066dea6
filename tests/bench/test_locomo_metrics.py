"""Gold normalisation, loader and metrics of the LoCoMo benchmark, on tiny hand-made fixtures."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import locomo_lib as L  # noqa: E402


def fs(*ids: str) -> frozenset[str]:
    return frozenset(ids)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["D1:3"], ("D1:3",)),
        (["D8:6; D9:17"], ("D8:6", "D9:17")),
        (["D:11:26"], ("D11:26",)),
        (["D3:05"], ("D3:5",)),
        (["D03:5"], ("D3:5",)),
        (["D"], ()),
        (["D1:2, D1:4 D2:1"], ("D1:2", "D1:4", "D2:1")),
        (["D1:2", "D1:2"], ("D1:2",)),
        ([], ()),
        (["garbage", "D7:1"], ("D7:1",)),
    ],
)
def test_normalise_evidence(raw, expected):
    assert L.normalise_evidence(raw) == expected


def test_parse_session_date():
    assert L.parse_session_date("1:56 pm on 8 May, 2023") == "2023-05-08T13:56:00.000Z"
    assert L.parse_session_date("10:04 am on 19 January, 2023") == "2023-01-19T10:04:00.000Z"
    assert L.parse_session_date("12:00 AM on 1 June, 2022") == "2022-06-01T00:00:00.000Z"


def test_loader_on_fixture(tmp_path: Path):
    conv = {
        "speaker_a": "Ann",
        "speaker_b": "Bob",
        "session_2_date_time": "9:00 am on 2 March, 2021",
        "session_2": [{"speaker": "Bob", "dia_id": "D2:1", "text": "Later."}],
        "session_1_date_time": "8:00 pm on 1 March, 2021",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bob."},
            {"speaker": "Bob", "dia_id": "D1:2", "text": "Look!", "blip_caption": "a photo of a cat",
             "img_url": ["x"], "query": "cat"},
        ],
        "session_3_date_time": "9:00 am on 5 March, 2021",  # a date with no session
        "qa": [
            {"question": "Who has a cat?", "answer": "Bob", "evidence": ["D1:2"], "category": 4},
            {"question": "When?", "answer": "x", "evidence": ["D1:1; D2:1"], "category": 2},
            {"question": "Trick?", "adversarial_answer": "y", "evidence": ["D1:1"], "category": 5},
            {"question": "No gold", "answer": "z", "evidence": ["D"], "category": 1},
            {"question": "Missing turn", "answer": "z", "evidence": ["D9:9"], "category": 3},
        ],
    }
    path = tmp_path / "conv-99.json"
    path.write_text(json.dumps(conv))
    c = L.load_conversation(path)
    assert [t.dia_id for t in c.turns] == ["D1:1", "D1:2", "D2:1"]  # session order, not key order
    assert c.turns[1].content == "Bob: Look! [shares a photo: a photo of a cat]"
    assert c.turns[0].content == "Ann: Hi Bob."
    assert c.turns[0].created_at == "2021-03-01T20:00:00.000Z"
    assert c.turns[2].created_at == "2021-03-02T09:00:00.000Z"
    scored = c.scored_questions()
    assert [q.question for q in scored] == ["Who has a cat?", "When?", "Missing turn"]
    assert scored[1].gold == ("D1:1", "D2:1")
    assert c.missing_gold() == [("conv-99#4", "D9:9")]
    assert len(L.load_all(tmp_path)) == 1


def test_recall_and_recall_all():
    ranked = [fs("a"), fs("x"), fs("b"), fs("y"), fs("z"), fs("c")]
    gold = ["a", "b", "c"]
    assert L.recall_at_k(ranked, gold, 1) == pytest.approx(1 / 3)
    assert L.recall_at_k(ranked, gold, 5) == pytest.approx(2 / 3)
    assert L.recall_at_k(ranked, gold, 10) == pytest.approx(1.0)
    assert L.recall_all_at_k(ranked, gold, 5) == 0.0
    assert L.recall_all_at_k(ranked, gold, 10) == 1.0
    assert L.recall_at_k([], gold, 10) == 0.0
    # a gold id naming no turn caps recall below 1
    assert L.recall_at_k(ranked, ["a", "missing"], 10) == pytest.approx(0.5)


def test_ndcg_binary_gains_and_ideal_cap():
    # one gold at rank 1 -> 1.0; at rank 2 -> 1/log2(3)
    assert L.ndcg_at_k([fs("g"), fs("x")], ["g"], 10) == pytest.approx(1.0)
    assert L.ndcg_at_k([fs("x"), fs("g")], ["g"], 10) == pytest.approx(1 / math.log2(3))
    # two gold at ranks 1 and 3, ideal over min(|gold|, k) = 2
    dcg = 1 + 1 / math.log2(4)
    idcg = 1 + 1 / math.log2(3)
    assert L.ndcg_at_k([fs("a"), fs("x"), fs("b")], ["a", "b"], 10) == pytest.approx(dcg / idcg)
    # ideal capped at k: 12 gold, all of top 10 gold -> 1.0
    gold = [f"g{i}" for i in range(12)]
    assert L.ndcg_at_k([fs(g) for g in gold[:10]], gold, 10) == pytest.approx(1.0)
    assert L.ndcg_at_k([fs("x")] * 3, ["a"], 10) == 0.0


def test_multi_id_results_count_each_gold_once():
    # a deduplicated memory standing for two turns
    ranked = [fs("a", "b"), fs("a")]
    assert L.recall_at_k(ranked, ["a", "b"], 5) == 1.0
    # the repeated "a" at rank 2 gains nothing
    assert L.ndcg_at_k(ranked, ["a", "b"], 10) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert L.dedup_ranked(["a", ["b", "c"], []]) == [fs("a"), fs("b", "c")]


def test_aggregate_micro_average():
    rows = [
        (1, {"recall@5": 0.0, "recall@10": 1.0, "ndcg@10": 0.5, "recall_all@10": 1.0}),
        (1, {"recall@5": 1.0, "recall@10": 1.0, "ndcg@10": 1.0, "recall_all@10": 1.0}),
        (4, {"recall@5": 0.0, "recall@10": 0.0, "ndcg@10": 0.0, "recall_all@10": 0.0}),
    ]
    agg = L.aggregate(rows)
    assert agg["overall"]["n"] == 3
    assert agg["overall"]["recall@10"] == pytest.approx(2 / 3)
    assert agg["by_category"]["1 multi-hop"]["recall@5"] == pytest.approx(0.5)
    assert agg["by_category"]["4 single-hop"]["n"] == 1


def test_sign_test():
    r = L.sign_test([1, 1, 1, 0, 0.5], [0, 0, 0, 0, 0.5])
    assert (r["wins"], r["losses"], r["ties"]) == (3, 0, 2)
    assert r["p_value"] == pytest.approx(0.25)  # 2 * 0.5**3
    assert L.sign_test([0, 0], [0, 0])["p_value"] == 1.0
    r = L.sign_test([1] * 10 + [0] * 10, [0] * 10 + [1] * 10)
    assert r["p_value"] == pytest.approx(1.0)


def test_reference_bm25_ranks_matching_doc_first():
    docs = ["Ann: I adopted a cat", "Bob: the weather is nice", "Ann: my cat likes fish, cat food"]
    bm = L.ReferenceBM25(docs)
    top = bm.search("who has a cat", 3)
    assert set(top[:2]) == {0, 2}
    assert 1 not in top  # shares no token
    assert bm.search("zzz", 3) == []
    assert L.tokenize("Hi, Bob's 2nd-cat!") == ["hi", "bob", "s", "2nd", "cat"]
