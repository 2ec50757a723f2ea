"""The cells of one table under a profile match, as typed expressions (``canonical.stage_table``):
each canonical field's cell, header and value (``num``, ``day``, ``txt``, the periods of a
``period_from_pay_date`` rule), the steps a value needs worked out once however often the staged
columns use it."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from transforms.ingest.read.cast.cell_values import compared
from transforms.ingest.read.cast.durations import hours_minutes
from transforms.ingest.read.cast.parsing import (
    date_expr,
    number_expr,
    numbers,
    one_chunk,
    period_from_pay_date,
    text_expr,
)


@dataclass
class Cells:
    """The cells of one table under a profile match: each canonical field's cell, header and
    typed value (``num``, ``day``, ``txt``) as expressions over the table's frame."""

    table: object  # readers.RawTable
    match: object  # profiles.Match

    def __post_init__(self) -> None:
        self.profile = self.match.profile
        self.field_col = {name: f"c{pos}" for name, pos in self.match.columns.items()}
        # the table's frame and the values worked out once however often the columns use them
        # (a long layout's amount is its wages, its taxes and its line's amount): the typed
        # columns are expressions over ``work``
        self.work: pl.DataFrame = self.table.frame
        self._once: dict[tuple[str, str], pl.Expr] = {}

    def _kept(self, key: tuple[str, str], expr) -> pl.Expr:
        if key not in self._once:
            name = f"__{key[0]}_{key[1]}"
            self.work = self.work.with_columns(expr().alias(name))
            self._once[key] = pl.col(name)
        return self._once[key]

    def cell(self, name: str) -> pl.Expr:
        return pl.col(self.field_col[name]) if name in self.field_col else pl.lit(None, dtype=pl.String)

    def header(self, name: str) -> str:
        return self.table.headers[self.match.columns[name]] if name in self.match.columns else name

    def number(self, name: str) -> pl.Expr:
        """A field's cells as numbers, by the steps its cells need (``parsing.fitted``)."""
        col = self.field_col.get(name)
        if col is None:
            return number_expr(self.cell(name), self.profile.number)
        if name in self.profile.units:  # hours and minutes (76:45), or a plain number of hours
            return self._kept(("number", name), lambda: hours_minutes(self.table.frame.get_column(col),
                                                                      self.profile.number))
        return self._kept(("number", name), lambda: numbers(self.table.frame.get_column(col), self.profile.number))

    def num(self, col: str) -> pl.Expr:
        nf, cell = self.profile.number, self.cell
        if col in self.match.derived:
            parts = [self.number(p) for p in self.match.derived[col]]
            blank = pl.all_horizontal([text_expr(cell(p)).is_null() for p in self.match.derived[col]])
            bad = pl.any_horizontal(
                [text_expr(cell(p)).is_not_null() & n.is_null() for p, n in zip(self.match.derived[col], parts, strict=True)]
            )
            total = pl.sum_horizontal([p.fill_null(0.0) for p in parts]).round(6)
            if nf.blank == "zero":  # blank parts are 0, and so is a row with all of them blank
                return pl.when(bad).then(None).otherwise(total)
            return pl.when(blank | bad).then(None).otherwise(total)
        return self.number(col)

    def day(self, col: str) -> pl.Expr:
        """The cells of ``col`` as dates: by the layout's own formats when they read every cell,
        else by every format people and spreadsheets write (``parsing.date_expr``), worked out once
        here (the full set costs four times one format: a big export is read by its own)."""
        if col not in self.field_col:
            return pl.lit(None, dtype=pl.Date)
        return self._kept(("day", col), lambda: self._dates(col))

    def _dates(self, col: str) -> pl.Series:
        """Each distinct cell parsed once (a date recurs on every line of a check, every row of a
        pay period) and the dates put back in the cells' places."""
        cells = one_chunk(self.table.frame.get_column(self.field_col[col]))
        distinct = cells.unique().drop_nulls().to_frame("v")
        own = distinct.select(date_expr(pl.col("v"), self.profile.date_formats, universal=False)).to_series()
        given = distinct.select(text_expr(pl.col("v")).is_not_null()).to_series()
        if (given & own.is_null()).any():
            own = distinct.select(date_expr(pl.col("v"), self.profile.date_formats)).to_series()
        return cells.replace_strict(distinct.get_column("v"), own, default=None, return_dtype=pl.Date)

    def compared(self, col: str) -> pl.Expr:
        """The cells of the table's column ``col`` (``c<pos>``) as two lines are compared by them
        (``cell_values.compared``: numbers as numbers, dates as dates, text trimmed)."""
        return self._kept(("value", col), lambda: compared(self.table.frame.get_column(col), self.profile.date_formats,
                                                           self.profile.number))

    def txt(self, col: str) -> pl.Expr:
        if col not in self.field_col:
            return text_expr(self.cell(col))
        return self._kept(("text", col), lambda: text_expr(self.cell(col)))

    def employee_id(self) -> pl.Expr:
        """The employee id: its cell, or the text of ``employee_id_from`` (the employee's name as
        the export prints it) where the export has none."""
        if "employee_id" in self.field_col or not self.profile.employee_id_from:
            return self.txt("employee_id")
        return text_expr(pl.concat_str([text_expr(self.cell(f)) for f in self.profile.employee_id_from],
                                       separator=", ", ignore_nulls=True))

    def periods(self, rule, lag_col: str | None) -> tuple[pl.Expr, pl.Expr]:
        """(period_start, period_end) by a profile's ``period_from_pay_date`` rule, worked out once
        per distinct (pay date, frequency, lag) and put back in the rows' places: every line of a
        check, every check of a pay run, shares them (per row, the rule's date arithmetic over
        every frequency was most of a journal's staging: 1.4 s of 2.2M lines)."""
        if ("period", "start") not in self._once:
            keys = [self.day("pay_date").alias("__p"), self.txt(rule.frequency or "pay_frequency").alias("__f")]
            if lag_col is not None:
                keys.append(self.txt(lag_col).alias("__l"))
            rows = self.work.select(keys)
            if rows.height != self.work.height:  # every key a literal (no such column): one per row
                rows = self.work.select(pl.int_range(pl.len()).alias("__i"), *keys).drop("__i")
            start, end = period_from_pay_date(pl.col("__p"), pl.col("__f"), rule,
                                              pl.col("__l") if lag_col is not None else None)
            table = rows.unique().with_columns(start.alias("__ps"), end.alias("__pe"))
            got = rows.join(table, on=rows.columns, how="left", nulls_equal=True, maintain_order="left")
            self.work = self.work.with_columns(got.get_column("__ps").alias("__period_start"),
                                               got.get_column("__pe").alias("__period_end"))
            self._once[("period", "start")] = pl.col("__period_start")
            self._once[("period", "end")] = pl.col("__period_end")
        return self._once[("period", "start")], self._once[("period", "end")]

    def employer(self) -> pl.Expr:
        e = self.txt("employer_id")
        for ch in self.profile.employer_id_strip:
            e = e.str.replace_all(ch, "", literal=True)
        return e
