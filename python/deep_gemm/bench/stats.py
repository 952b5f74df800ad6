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


def ok_us(row, key):
    """The time of library ``key`` in a report row, None unless its result is 'ok'."""
    r = row['results'].get(key)
    return r.get('us') if r is not None and r['status'] == 'ok' else None


def add_read_floor(row, floor_bytes):
    """A row's read floor: ``floor_bytes`` at the bandwidth of its 'copy' entry (params copy_bytes moved), and that
    floor over our time (copy_gbps, read_floor_us, floor_vs_ours)."""
    row['copy_gbps'] = gbps(row['params']['copy_bytes'], ok_us(row, 'copy'))
    row['read_floor_us'] = None if not row['copy_gbps'] else floor_bytes / row['copy_gbps'] / 1e3
    row['floor_vs_ours'] = ratio(row['read_floor_us'], ok_us(row, 'ours'))
    return row
