"""The knobs of the synthetic population (shares, ranges, names: not legal numbers) and the
small helpers every builder uses: one random stream per aspect, picks, day offsets as dates."""

from __future__ import annotations

import zlib
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from transforms.schema import WAGE_CATEGORIES

# --- knobs of the synthetic population (not legal numbers) -----------------------------------

NJ_COUNTIES: tuple[str, ...] = (
    "Atlantic", "Bergen", "Burlington", "Camden", "Cape May", "Cumberland", "Essex",
    "Gloucester", "Hudson", "Hunterdon", "Mercer", "Middlesex", "Monmouth", "Morris", "Ocean",
    "Passaic", "Salem", "Somerset", "Sussex", "Union", "Warren",
)  # fmt: skip
# the county seat and a ZIP code of it, in NJ_COUNTIES order: the town of an employer's address
COUNTY_SEATS: tuple[str, ...] = (
    "Mays Landing, NJ 08330", "Hackensack, NJ 07601", "Mount Holly, NJ 08060", "Camden, NJ 08102",
    "Cape May Court House, NJ 08210", "Bridgeton, NJ 08302", "Newark, NJ 07102", "Woodbury, NJ 08096",
    "Jersey City, NJ 07306", "Flemington, NJ 08822", "Trenton, NJ 08608", "New Brunswick, NJ 08901",
    "Freehold, NJ 07728", "Morristown, NJ 07960", "Toms River, NJ 08753", "Paterson, NJ 07505",
    "Salem, NJ 08079", "Somerville, NJ 08876", "Newton, NJ 07860", "Elizabeth, NJ 07201", "Belvidere, NJ 07823",
)  # fmt: skip
STREETS: tuple[str, ...] = ("Main Street", "Broad Street", "Market Street", "State Street", "Route 1", "Park Avenue",
                            "Industrial Way", "Commerce Drive")  # fmt: skip
FREQUENCIES: tuple[str, ...] = ("weekly", "biweekly", "semimonthly", "monthly")
FREQUENCY_SHARES = (0.35, 0.35, 0.20, 0.10)
# dominant category of an employer, in WAGE_CATEGORIES order
CATEGORY_SHARES = (0.70, 0.15, 0.10, 0.05)
EMPLOYERS_PER_FILE = 50
MEAN_EMPLOYEES = 6  # 1 + geometric: a long tail of larger employers
TAX_RATE_RANGE = (0.08, 0.12)  # employer-level effective payroll tax rate on gross wages
UI_RATE_RANGE = (0.004, 0.054)
DI_RATE_RANGE = (0.001, 0.0075)
WEEKLY_HOURS_RANGE = (10.0, 40.0)

NAME_PLACES = (
    "Garden State", "Pine Barrens", "Shore", "Liberty", "Palisades", "Raritan", "Delaware Valley",
    "Hudson", "Passaic", "Meadowlands", "Highlands", "Atlantic", "Cape", "Princeton", "Jersey",
    "Skylands", "Boardwalk", "Ridgewood", "Monmouth", "Ocean", "Ramapo", "Millstone", "Kittatinny",
    "Barnegat", "Hackensack", "Musconetcong", "Watchung", "Navesink", "Tuckahoe", "Batsto",
)  # fmt: skip
NAME_TRADES: dict[str, tuple[str, ...]] = {
    "general": (
        "Hardware", "Logistics", "Printing", "Cleaning Services", "Packaging", "Auto Repair",
        "Pharmacy", "Bakery", "Laundry", "Office Supply", "Recycling", "Assembly", "Bookbinding",
    ),
    "tipped": ("Diner", "Bistro", "Grill", "Tavern", "Pizzeria", "Car Wash", "Salon", "Cafe"),
    "seasonal_small": (
        "Boardwalk Games", "Ice Cream", "Beach Rentals", "Marina", "Mini Golf", "Surf Shop",
        "Water Park", "Christmas Trees",
    ),
    "agricultural": ("Farms", "Orchards", "Blueberry Farm", "Cranberry Bogs", "Nursery", "Dairy"),
}  # fmt: skip
NAME_SUFFIXES = ("LLC", "Inc.", "Co.", "Corp.", "LLC", "& Sons", "Group", "LLC")


def stream(seed: int, stream: str) -> np.random.Generator:
    """An independent, stable stream per aspect, so changing one aspect leaves the others alone."""
    return np.random.default_rng(
        [int(seed) & 0xFFFFFFFF, int(seed) >> 32, zlib.crc32(stream.encode())]
    )


def day_dates(offsets: np.ndarray, d0: date) -> pl.Series:
    """Day offsets from d0 -> a polars Date series."""
    epoch = (d0 - date(1970, 1, 1)).days
    return pl.Series(np.asarray(offsets, dtype=np.int64) + epoch, dtype=pl.Int32).cast(pl.Date)


def zfill(values: np.ndarray, width: int) -> pl.Expr:
    return pl.lit(pl.Series(values.astype(np.int64))).cast(pl.String).str.zfill(width)


def pick(
    rng: np.random.Generator, mask: np.ndarray, k: int = 1, exclude: np.ndarray | None = None
) -> np.ndarray:
    """k random indices where mask holds (fewer if not enough), avoiding ``exclude``."""
    cand = np.flatnonzero(mask)
    if exclude is not None and exclude.size:
        cand = np.setdiff1d(cand, exclude, assume_unique=False)
    if cand.size == 0:
        return cand
    return rng.choice(cand, size=min(k, cand.size), replace=False)


def mw_day_table(params: Any, lo: date, hi: date, strict_lo: date, strict_hi: date) -> np.ndarray:
    """Minimum wage in cents, shape (4 categories, days lo..hi), from ``params.schedule``.

    The wider window [lo, hi] is asked first; if the reference data does not reach that far (a
    period running into the year after the tax year), the table is built from [strict_lo,
    strict_hi] (which must be covered) and held constant at the edges. Days outside the three
    payroll years are never priced by the credit.
    """
    n = (hi - lo).days + 1
    table = np.zeros((len(WAGE_CATEGORIES), n), dtype=np.int64)
    for c, cat in enumerate(WAGE_CATEGORIES):
        name = f"minimum_wage.{cat}"
        try:
            pieces = params.schedule(name, lo, hi)
        except (ValueError, LookupError):  # the wide window is optional; the strict one must work
            pieces = params.schedule(name, strict_lo, strict_hi)
        row = np.full(n, -1, dtype=np.int64)
        for start, end, value in pieces:
            a = max((start - lo).days, 0)
            b = min((end - lo).days, n - 1)
            if b >= a:
                row[a : b + 1] = round(float(value) * 100)
        known = np.flatnonzero(row >= 0)
        if known.size == 0:
            raise ValueError(f"{name}: no minimum wage between {strict_lo} and {strict_hi}")
        # hold the first/last known value outside the covered window
        row[: known[0]] = row[known[0]]
        row[known[-1] + 1 :] = row[known[-1]]
        if (row[known[0] : known[-1] + 1] < 0).any():
            raise ValueError(f"{name}: the schedule has a gap between {lo} and {hi}")
        table[c] = row
    return table


def calendar_periods(d0: date, years: range, semimonthly: bool) -> tuple[np.ndarray, np.ndarray]:
    starts, ends = [], []
    for y in years:
        for m in range(1, 13):
            first = date(y, m, 1)
            last = (date(y + (m == 12), m % 12 + 1, 1)) - timedelta(days=1)
            if semimonthly:
                starts += [first, date(y, m, 16)]
                ends += [date(y, m, 15), last]
            else:
                starts.append(first)
                ends.append(last)
    s = np.array([(d - d0).days for d in starts], dtype=np.int64)
    e = np.array([(d - d0).days for d in ends], dtype=np.int64)
    return s, e


def write_csv(frame: pl.DataFrame, path: Path, *, float_precision: int | None = None) -> None:
    frame.write_csv(
        path,
        float_precision=float_precision,
        date_format="%Y-%m-%d",
        datetime_format="%Y-%m-%dT%H:%M:%S",
        null_value="",
    )
