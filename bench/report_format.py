"""Cell formatting shared by the bench report's tables (report.py and
report_sync.py): numbers, ratios, shares and goal marks, with "—" for a
figure the run did not measure."""


def fmt(v, digits=0):
    """A number with `digits` decimals; whole numbers from 1,000 up get
    thousands separators; a bool is "yes" or "NO"."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if abs(v) >= 1000 and digits == 0:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def pct(v):
    """A share (0.25) as a whole percentage (25%)."""
    return "—" if v is None else f"{v:.0%}"


def times(r):
    """A ratio already computed, as "1.23×"."""
    return "—" if r is None else f"{r:.2f}×"


def ratio(a, b):
    """a / b as "1.23×"; "—" when either is missing or b is 0."""
    return "—" if a is None or b in (None, 0) else times(a / b)


def goal_met(ok):
    """The "met" cell of a goals table."""
    return "yes" if ok else "**no**"


def pair_rate(a, b):
    """Pairs/s of two steps done one after the other, from each step's
    requests/s (1 / (1/a + 1/b)); None when either is missing or 0."""
    return 1 / (1 / a + 1 / b) if a and b else None
