"""Recall names as enums (a typo fails when the config is built) and the one merge of settings + preset."""

from __future__ import annotations

import pydantic
import pytest

from kenning.core.config import load_settings
from kenning.core.errors import InvalidInput
from kenning.core.types import MemoryDraft
from kenning.retrieval import config as recall_config
from kenning.retrieval.catalogue import LEGS, STAGES
from kenning.retrieval.config import (DEFAULT_WEIGHTS, PRESETS, Leg, Preset, QueryType, RecallConfig, Stage,
                                     effective_config)


def test_every_leg_and_stage_name_has_its_function():
    assert set(LEGS) == set(Leg) and set(STAGES) == set(Stage)
    assert set(PRESETS) == set(Preset)


@pytest.mark.parametrize("field, value, allowed", [
    ("legs", ("bm25", "vectr"), "'bm25', 'vector' or 'graph'"),
    ("stages", ("session_contxt",), "'provenance'"),
    ("weights", {"semantc": {"bm25": 1.0}}, "'identifier', 'semantic' or 'structural'"),
])
def test_a_misspelt_name_fails_when_the_config_is_built_naming_the_allowed_values(field, value, allowed):
    with pytest.raises(pydantic.ValidationError) as err:
        RecallConfig(**{field: value})
    assert allowed in str(err.value)
    with pytest.raises(pydantic.ValidationError):
        PRESETS[Preset.HYBRID].with_(**{field: value})  # a copy is validated like a new config


def test_an_unknown_preset_is_invalid_input_naming_the_presets(tmp_path):
    settings = load_settings(environ={"KENNING_HOME": str(tmp_path)})
    with pytest.raises(InvalidInput, match="unknown recall preset 'grpah'; choose from bm25, dense, hybrid"):
        effective_config(settings, "grpah")


def test_a_preset_keeps_the_users_rrf_k_and_candidate_pool(tmp_path):
    settings = load_settings(environ={"KENNING_HOME": str(tmp_path)}, recall={"rrf_k": 20, "candidate_pool": 30})
    for name in Preset:
        cfg = effective_config(settings, name)
        assert (cfg.rrf_k, cfg.leg_limit, cfg.preset) == (20, 30, name)
        assert (cfg.legs, cfg.stages, cfg.extras) == (PRESETS[name].legs, PRESETS[name].stages, PRESETS[name].extras)
    default = effective_config(settings)
    assert default.preset is Preset.DEFAULT and default.stages == (Stage.SESSION_CONTEXT, Stage.PROVENANCE)
    # request overrides win over both
    assert effective_config(settings, "bm25", rrf_k=3).rrf_k == 3


def test_a_preset_that_sets_rrf_k_itself_keeps_it(tmp_path, monkeypatch):
    settings = load_settings(environ={"KENNING_HOME": str(tmp_path)}, recall={"rrf_k": 20, "candidate_pool": 30})
    own = RecallConfig(legs=(Leg.BM25,), rrf_k=60)  # a preset naming rrf_k in its definition
    monkeypatch.setattr(recall_config, "PRESETS", {**PRESETS, Preset.BM25: own})
    cfg = effective_config(settings, "bm25")
    assert (cfg.rrf_k, cfg.leg_limit) == (60, 30)


def test_the_default_presets_switches_apply_to_it_alone(tmp_path):
    settings = load_settings(environ={"KENNING_HOME": str(tmp_path)}, recall={"session_context": False},
                             pipeline={"hints": {"enabled": True}})
    default = effective_config(settings)
    assert default.stages == (Stage.PROVENANCE,) and default.extras.hints
    assert effective_config(settings, "default") == default
    context = effective_config(settings, "context")  # a named preset runs what it names
    assert context.stages == (Stage.SESSION_CONTEXT,) and not context.extras.hints


@pytest.fixture
def settings(home, store_config, unused_port):
    return load_settings(environ={"KENNING_HOME": str(home)}, port=unused_port, store=store_config,
                         recall={"rrf_k": 20})


def test_recall_with_a_preset_fuses_with_the_users_rrf_k(kenning):
    kenning.remember(MemoryDraft(content="we deploy the quokka service with scripts/deploy.sh"))
    kenning.remember(MemoryDraft(content="quokka dashboards live in grafana"))
    for preset in ("bm25", None):
        hits = kenning.recall("quokka deploy", config=preset, track_access=False)
        assert hits and kenning.recall_config(preset).rrf_k == 20
        bm25_rank = hits[0].legs["bm25"]["rank"]
        if preset == "bm25":  # one leg: score = its semantic-query weight / (rrf_k + rank)
            weight = DEFAULT_WEIGHTS[QueryType.SEMANTIC][Leg.BM25]
            assert hits[0].score == pytest.approx(weight / (20 + bm25_rank))
        # what the BM25 leg found comes back with the hits (the prompt hook reads it: no second query)
        found = {h.memory.id: h.legs["bm25"]["score"] for h in hits if "bm25" in h.legs}
        assert found and {m: round(s, 6) for m, s in hits.bm25_matches if m in found} == found
