"""A case's rubric, judged by a model of the author's choice (``sea eval --judge MODEL``).

The judge is asked once, with the rubric, the user's (last) input and the persona's reply,
and answers ``PASS`` or ``FAIL`` on its first line with a reason. The reply is quoted as
data: its text never becomes an instruction with the trust marker (``<system>`` is
neutralized).
"""

from __future__ import annotations

import re

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from sea.eval.expect import Check
from sea.lang.trust import neutralize

INSTRUCTIONS = (
    "You grade a chat assistant's reply against a rubric. Answer with PASS or FAIL on the "
    "first line, then one sentence why. Judge only what the rubric asks."
)
_VERDICT = re.compile(r"\b(PASS|FAIL)\b", re.IGNORECASE)


async def judge(model: BaseChatModel, rubric: str, user_input: str, reply: str) -> Check:
    """The rubric's check: passed when the judge says PASS; not judged when it says neither
    or fails (its error is the detail)."""
    prompt = (f"Rubric: {neutralize(rubric)}\n\n"
              f"The user said:\n<<<\n{neutralize(user_input)}\n>>>\n\n"
              f"The assistant replied:\n<<<\n{neutralize(reply)}\n>>>\n\n"
              "PASS or FAIL?")
    try:
        answer = await model.ainvoke([SystemMessage(INSTRUCTIONS), HumanMessage(prompt)])
    except Exception as exc:  # the judge's failure leaves the rubric unjudged, not failed
        return Check("rubric", None, f"the judge failed: {type(exc).__name__}: {exc}")
    text = answer.content if isinstance(answer.content, str) else str(answer.content)
    found = _VERDICT.search(text)
    if found is None:
        return Check("rubric", None, f"the judge said neither PASS nor FAIL: {text[:160]!r}")
    passed = found.group(1).upper() == "PASS"
    return Check("rubric", passed, "" if passed else text.strip()[:240])
