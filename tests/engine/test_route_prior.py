"""The router's lexical prior (sea.engine.tools.route_prior), on small made-up catalogues."""

from __future__ import annotations

from sea.engine.tools.route_prior import Entry, features, rank

CHAT = Entry("basic_chat", "Answer the user directly.", ("hi", "thanks!", "how are you?"))
RECALL = Entry("memory_recall", "Search memory for something said before.",
               ("do you remember my sister's name?", "前に言ったこと覚えてる？"))
FILES = Entry("sub_act", "Read, list or search the workspace's files.",
              ("list my files", "search my notes for the address", "ファイル一覧を見せて"))
WRITE = Entry("sub_plan", "Write or change files.", ("write my outline into notes/outline.md",))
ALL = [CHAT, RECALL, FILES, WRITE]


def test_features_are_words_character_pairs_and_paths() -> None:
    assert set(features("Do you remember my Dog's names?")) == {"remember", "dog", "name"}
    assert set(features("覚えてる")) == {"覚え", "えて", "てる"}
    assert "<path>" in features("show me notes/todo.md")
    assert "<path>" not in features("show me my notes")


def test_a_clear_match_leaves_its_playbook_first_and_the_unsure_safe_choice_open() -> None:
    ranking = rank("remember what my sister is called?", ALL, sure=0.99)
    assert ranking.best == "memory_recall"
    assert ranking.candidates[-1] == "basic_chat" and not ranking.decided
    assert ranking.scores["memory_recall"] > ranking.scores["sub_act"]


def test_japanese_matches_by_character_pairs() -> None:
    assert rank("うちの犬のこと覚えてる？", ALL).best == "memory_recall"
    assert rank("ファイルの一覧ちょうだい", ALL).best == "sub_act"


def test_nothing_in_common_decides_the_safe_choice_without_a_model() -> None:
    ranking = rank("why is the sky blue", ALL)
    assert ranking.candidates == ["basic_chat"] and ranking.decided
    assert ranking.confidence < 0.12


def test_a_sure_match_does_not_add_the_safe_choice() -> None:
    ranking = rank("list my files", ALL, sure=0.3)
    assert ranking.candidates == ["sub_act"] and ranking.decided
    assert "basic_chat" in rank("list my files", ALL, sure=1.01).candidates


def test_candidates_are_bounded_and_best_first() -> None:
    ranking = rank("write notes", ALL, max_candidates=1, ratio=0.0)
    assert ranking.candidates[0] == ranking.best
    assert len([c for c in ranking.candidates if c != "basic_chat"]) == 1


def test_without_the_safe_playbook_the_best_one_is_the_fallback() -> None:
    ranking = rank("why is the sky blue", [RECALL, FILES])
    assert ranking.candidates == ["memory_recall"]
    assert rank("anything", []).candidates == ["basic_chat"]


def test_keep_fallback_leaves_the_safe_choice_to_the_model_even_when_the_prior_is_sure() -> None:
    sure = rank("list my files", ALL, sure=0.3)
    kept = rank("list my files", ALL, sure=0.3, keep_fallback=True)
    assert sure.decided and not kept.decided
    assert kept.candidates == ["sub_act", "basic_chat"]
    # nothing in common: the safe choice alone, kept or not (no model is needed to stop)
    assert rank("why is the sky blue", ALL, keep_fallback=True).candidates == ["basic_chat"]
