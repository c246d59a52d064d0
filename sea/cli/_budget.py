"""The options that bound a pulse's model calls and price them: ``--max-calls``,
``--max-tokens-in``, ``--max-tokens-out``, ``--max-cost`` (``Limits.budget``) and ``--prices
FILE`` (``LLMOptions.prices``), shared by ``sea run``, ``sea resume`` and ``sea worker``; and
``--safety-rules FILE`` (``LLMOptions.safety_rules``, the host's rules in Base); and
``--history-tokens N`` (``LLMOptions.history_tokens``: the history's token budget, counted by
each model's tokenizer) and ``--response-cache FILE`` (``LLMOptions.response_cache``: answer
a deterministic call asked again from a SQLite cache).

What a pulse spent is kept with the pulse, so a resumed pulse goes on counting from there;
the bounds are the resuming command's, which is why the resume command ``sea run`` prints
repeats them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from sea.cli._filelimits import file_limit
from sea.cli._numbers import amount, count, positive_count
from sea.errors import UsageError
from sea.jsonfile import CONFIG_FILES, FileTooLarge, NotARegularFile, read_regular
from sea.llm.budget import Budget
from sea.llm.cache import ResponseCache
from sea.llm.models import ModelSet, model_name
from sea.llm.options import LLMOptions
from sea.llm.prices import PriceTable, load_prices
from sea.llm.tokens import TokenBudgets

_COUNTS = (("max_calls", "--max-calls"), ("max_tokens_in", "--max-tokens-in"),
           ("max_tokens_out", "--max-tokens-out"))


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the budget, price and safety rules options."""
    group = parser.add_argument_group(
        "budgets of one pulse's model calls (SEA566 names the one exceeded)"
    )
    group.add_argument("--max-calls", type=count, metavar="N",
                       help="the most model calls a pulse makes (default: no bound)")
    group.add_argument("--max-tokens-in", type=count, metavar="N",
                       help="the most input tokens over a pulse's model calls")
    group.add_argument("--max-tokens-out", type=count, metavar="N",
                       help="the most output tokens over a pulse's model calls")
    group.add_argument("--max-cost", type=amount, metavar="AMOUNT",
                       help="the most a pulse's model calls may cost (by --prices)")
    group.add_argument(
        "--prices", type=_prices, metavar="FILE",
        help='JSON prices per million tokens: {"models": {"NAME": {"input_per_million": '
        '0.15, "output_per_million": 0.6}}, "default": {...}} (default: every model free)',
    )
    group.add_argument(
        "--allow-unpriced", action="store_true",
        help="run with --max-cost even when --prices prices none of the models in use "
        "(their calls cost 0, so the bound is never reached); without it that is refused",
    )
    add_safety_argument(parser)
    context = parser.add_argument_group("context and caching")
    context.add_argument(
        "--history-tokens", type=positive_count, metavar="N",
        help="the most tokens of earlier conversation a model call's history holds, counted "
        "by the model's own tokenizer (an estimate when it has none); the oldest messages "
        "that do not fit are left out whole (default: no token budget)")
    context.add_argument(
        "--response-cache", metavar="FILE",
        help="a SQLite file of answers: a deterministic model call asked again with the same "
        "context is answered from it without calling the model (default: no cache)")


def add_safety_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--safety-rules FILE``."""
    parser.add_argument(
        "--safety-rules", type=_safety_rules, metavar="FILE",
        help="a text file of rules every model call's Base carries after the persona's "
        "system prompt (default: none)",
    )


def budget_of(args: argparse.Namespace) -> Budget:
    """The budget the options name (no bound for an option not given).

    Raises:
        UsageError: ``--max-cost`` without ``--prices`` (every call would cost 0).
    """
    if args.max_cost is not None and args.prices is None:
        raise UsageError(
            f"--max-cost {args.max_cost:g} needs --prices FILE: without a price table every "
            "model call costs 0, so the bound would never be reached"
        )
    return Budget(args.max_calls, args.max_tokens_in, args.max_tokens_out, args.max_cost)


def check_cost_budget(args: argparse.Namespace, models: ModelSet,
                      warn: Callable[[str], None]) -> None:
    """Refuse a ``--max-cost`` that the price table makes unreachable: it prices none of
    the models in use, so every call costs 0 and the bound would silently never stop a
    pulse (unless ``--allow-unpriced`` says that is meant); ``warn`` names the models it
    leaves unpriced when it prices some.

    Raises:
        UsageError: no model in use has a price (SEA367).
    """
    prices: PricesOption | None = args.prices
    if args.max_cost is None or prices is None:
        return
    in_use: list[tuple[str, str]] = []
    for model in (models.normal, models.lightweight, *models.fallbacks):
        found = (model_name(model), model._llm_type)
        if found not in in_use:
            in_use.append(found)
    unpriced = prices.table.unpriced(in_use)
    if not unpriced:
        return
    names = ", ".join(repr(name) for name in unpriced)
    if len(unpriced) < len(in_use):
        warn(f"--prices {prices.path} prices no call of {names}: --max-cost "
             f"{args.max_cost:g} counts only the other models' calls")
    elif not args.allow_unpriced:
        raise UsageError(
            f"--max-cost {args.max_cost:g} can never be reached: the price table "
            f"{prices.path} prices none of the models in use ({names}), so every call costs "
            "0; name them under \"models\" with their prices (a \"default\" price does not "
            "cover the local and scripted models), or give --allow-unpriced to run with a "
            "cost bound that never stops a pulse", code="SEA367")


def llm_options_of(args: argparse.Namespace) -> LLMOptions:
    """The call path's settings the options name (the price table, the safety rules, the
    history's token budget, the response cache).

    Raises:
        UsageError: the response cache file cannot be opened.
    """
    prices: PricesOption | None = args.prices
    rules: SafetyRulesOption | None = getattr(args, "safety_rules", None)
    options = LLMOptions() if prices is None else LLMOptions(prices=prices.table)
    if rules is not None:
        options = replace(options, safety_rules=rules.text)
    tokens: int | None = getattr(args, "history_tokens", None)
    if tokens is not None:
        options = replace(options, history_tokens=TokenBudgets(default=tokens))
    cache: str | None = getattr(args, "response_cache", None)
    if cache is not None:
        options = replace(options, response_cache=ResponseCache.sqlite(
            Path(cache).expanduser()))
    return options


def budget_words(args: argparse.Namespace) -> list[str]:
    """The options again, as words of a command line (for the printed resume command)."""
    words: list[str] = []
    for name, option in (*_COUNTS, ("max_cost", "--max-cost")):
        value = getattr(args, name)
        if value is not None:
            words += [option, f"{value:g}" if isinstance(value, float) else str(value)]
    if args.prices is not None:
        words += ["--prices", str(args.prices.path)]
    if getattr(args, "allow_unpriced", False):
        words.append("--allow-unpriced")
    rules: SafetyRulesOption | None = getattr(args, "safety_rules", None)
    if rules is not None:
        words += ["--safety-rules", str(rules.path)]
    if getattr(args, "history_tokens", None) is not None:
        words += ["--history-tokens", str(args.history_tokens)]
    if getattr(args, "response_cache", None) is not None:
        words += ["--response-cache", str(Path(args.response_cache).expanduser().resolve())]
    return words


class PricesOption:
    """A ``--prices`` file, read and checked when the options are parsed."""

    def __init__(self, path: Path, table: PriceTable) -> None:
        self.path = path
        self.table = table


class SafetyRulesOption:
    """A ``--safety-rules`` file, read when the options are parsed."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.text = text


MAX_SAFETY_RULES_CHARS = 20_000
"""The longest safety rules file: its text goes into every model call."""


def _safety_rules(text: str) -> SafetyRulesOption:
    path = Path(text).expanduser().resolve()
    try:  # UTF-8 has at most 4 bytes a character: a larger file has too many characters
        rules = read_regular(path, 4 * MAX_SAFETY_RULES_CHARS).decode("utf-8")
    except FileTooLarge:
        raise _too_long(path) from None
    except NotARegularFile as exc:
        raise argparse.ArgumentTypeError(
            f"{path} is {exc.kind}, not a regular file; it was not read") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise argparse.ArgumentTypeError(f"cannot read {path}: {reason}") from None
    if len(rules) > MAX_SAFETY_RULES_CHARS:
        raise _too_long(path)
    if not rules.strip():
        raise argparse.ArgumentTypeError(f"{path} is empty")
    return SafetyRulesOption(path, rules.strip())


def _too_long(path: Path) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(
        f"{path} has more than {MAX_SAFETY_RULES_CHARS:,} characters; safety rules go "
        "into every model call, keep them short")


def _prices(text: str) -> PricesOption:
    given = Path(text).expanduser()  # read as given, so that an error names it so
    try:
        return PricesOption(given.resolve(), load_prices(given, limit=file_limit(CONFIG_FILES)))
    except UsageError as exc:
        raise argparse.ArgumentTypeError(f"{exc.message} ({exc.code})") from None
