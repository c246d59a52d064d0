"""A table that fits the terminal: as it is when it is narrow enough, else each row as a
block of ``header  value`` lines, so no number is ever cut to ``0.…``."""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console, ConsoleOptions, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text


class Fitted:
    """Renders ``table`` when its natural width fits, else :func:`vertical`."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[
            RenderableType]:
        width = natural_width(console, options, self.table)
        if width <= options.max_width:
            yield self.table
        else:
            yield from vertical(self.table)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.table).clamp(max_width=options.max_width)


def natural_width(console: Console, options: ConsoleOptions, table: Table) -> int:
    """The width ``table`` takes with no cell cut (measured as if the terminal were wide)."""
    wide = options.update_width(100_000)
    return Measurement.get(console, wide, table).maximum


def vertical(table: Table) -> Iterator[RenderableType]:
    """Each row (and the footer, if shown) as a block: its first cell, then one
    ``header  value`` line per other column; long values fold, none is cut."""
    columns = table.columns
    cells = [list(column.cells) for column in columns]
    rows = [[column_cells[index] for column_cells in cells] for index in range(table.row_count)]
    if table.show_footer:
        rows.append([column.footer for column in columns])
    for number, row in enumerate(rows):
        if number:
            yield Text("")
        block = Table.grid(padding=(0, 2))
        block.add_column(style="dim", no_wrap=True)
        block.add_column(overflow="fold")
        first, *rest = row
        yield first if isinstance(first, Text) else Text(str(first), style="bold")
        for column, value in zip(columns[1:], rest, strict=True):
            if value not in ("", None):
                block.add_row(f"  {column.header}", value)
        yield block
