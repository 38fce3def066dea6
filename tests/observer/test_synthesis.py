"""The optional single LLM synthesis call at promotion, against a real local Ollama-protocol server."""

from __future__ import annotations

import json

from kenning.core.config import load_settings
from kenning.core.events import ToolResult
from kenning.service import Kenning
from tests.pipeline.pipeline_helpers import Reply, ollama_llm, start_fake_llm, stop_fake_llm

CWD = "/work/llmapp"


def _session(k: Kenning, key: str) -> dict:
    k.observer.post_tool_use(ToolResult(session_key=key, tool_name="Read", cwd=CWD, project="llmapp",
                                        tool_input={"file_path": f"{CWD}/src/jobs/queue.py"}))
    k.observer.observe({"session_key": key, "type": "reasoning", "cwd": CWD,
                        "text": "I was wrong about the retry queue: jobs are acked before they run."})
    return k.observer.end_session(key, wait=True)


def test_one_synthesis_call_rewrites_the_candidates_and_a_bad_answer_keeps_the_template(tmp_path):
    fake = start_fake_llm()
    rewritten = "The job queue in src/jobs/queue.py acks jobs before running them, so a crash loses the job."
    answers = iter([json.dumps([{"i": 0, "content": rewritten}]), "not json at all"])
    fake.script = lambda task, prompt: Reply(next(answers))
    settings = load_settings(environ={"KENNING_HOME": str(tmp_path / "home")}, llm=ollama_llm(fake),
                             pipeline={"enabled": False})
    k = Kenning(settings).start(background=False)
    try:
        first = _session(k, "llm1")
        [memory] = [k.get(i) for i in first["promoted"]]
        assert memory.content == rewritten and memory.related_files == ["src/jobs/queue.py"]
        synth = [r for r in fake.requests if "Rewrite each observed coding-agent pattern" in r["prompt"]]
        assert len(synth) == 1  # one call per session, whatever the number of candidates

        k.observer.post_tool_use(ToolResult(session_key="llm2", tool_name="Read", cwd=CWD, project="llmapp",
                                            tool_input={"file_path": f"{CWD}/src/api/auth.py"}))
        k.observer.observe({"session_key": "llm2", "type": "reasoning", "cwd": CWD,
                            "text": "Correction: tokens are signed with the rotating key, not the static one."})
        second = k.observer.end_session("llm2", wait=True)
        [kept] = [k.get(i) for i in second["promoted"]]
        assert kept.content.startswith("Correction while working on `src/api/auth.py`")  # template kept
    finally:
        k.close()
        stop_fake_llm(fake)
