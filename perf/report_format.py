"""What every report section shares: numbers to three significant digits, Markdown tables, the weighted line fit."""

import math

import numpy as np


def number(value, digits=3) -> str:
    """Counts as they are; measurements to three significant digits; a dash when there is nothing."""
    if value is None:
        return "—"
    if isinstance(value, int):
        return f"{value:,}"
    if value == 0 or abs(value) >= 10 ** (digits - 1):
        return f"{value:,.0f}"
    return f"{value:,.{digits - 1 - math.floor(math.log10(abs(value)))}f}"


def table(header: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows] + [""]


def weighted_line(x, t) -> tuple[float, float, float]:
    """(intercept, slope, max relative residual) of t ≈ intercept + slope·x, fitted to relative errors.

    x spans decades, so plain least squares would let the largest x set the line and leave the
    intercept, the whole story at small x, to its rounding error. Weighting squared residuals by 1/t²
    makes every point count by its relative error; polyfit squares w itself, hence w = 1/t.
    """
    x, t = np.asarray(x, dtype=float), np.asarray(t, dtype=float)
    if len(set(x)) < 2:
        raise ValueError("a line needs at least two distinct x")
    slope, intercept = np.polyfit(x, t, 1, w=1 / t)
    return float(intercept), float(slope), float(np.max(np.abs(intercept + slope * x - t) / t))
