"""The arithmetic of a report: medians, rounds, ratios and geometric means (plain Python)."""
import math

# How the per-round medians of one library on one shape become its reported time.
ROUND_COMBINE = 'mean of the per-round medians'


def median(values):
    values = sorted(values)
    if not values:
        raise ValueError('values: expected at least one number, got none')
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def combine_rounds(round_times):
    if not round_times:
        raise ValueError('round_times: expected at least one round, got none')
    return sum(round_times) / len(round_times)


def ratio(theirs, ours):
    """Their time over ours: > 1 means we are faster. None when either time is missing or not positive."""
    if theirs is None or ours is None or theirs <= 0 or ours <= 0:
        return None
    return theirs / ours


def geomean(values):
    """Geometric mean of the positive values present (None entries are left out); None when there are none."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    if any(v <= 0 for v in values):
        raise ValueError(f'values: expected positive ratios, got {values}')
    return math.exp(sum(math.log(v) for v in values) / len(values))


def tflops(flops, us):
    return None if flops is None or not us else flops / us / 1e6


def gbps(num_bytes, us):
    return None if not us else num_bytes / us / 1e3
