"""DeepGEMM's test-selection helpers: the device's architecture, and decorators that skip a test or drop an
environment variable around it depending on a condition evaluated at call time."""
import functools
import os
from typing import Callable

__all__ = ['get_arch_major', 'test_filter', 'ignore_env']


def get_arch_major() -> int:
    """The compute capability major of the current CUDA device (9 on Hopper)."""
    import torch
    major, _ = torch.cuda.get_device_capability()
    return major


def test_filter(condition: Callable):
    """Runs the decorated function only when ``condition()`` is true; otherwise prints that it was filtered."""
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if condition():
                func(*args, **kwargs)
            else:
                print(f'{func.__name__}:')
                print(f' > Filtered by {condition}')
                print()
        return wrapper
    return decorator


# Not a test: pytest would otherwise collect the decorator factory from modules that import it.
test_filter.__test__ = False


def ignore_env(name: str, condition: Callable):
    """Runs the decorated function with environment variable ``name`` removed when ``condition()`` is true, and
    puts the variable back afterwards (also when the function raises)."""
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if not condition():
                return func(*args, **kwargs)
            saved = os.environ.pop(name, None)
            try:
                return func(*args, **kwargs)
            finally:
                if saved is not None:
                    os.environ[name] = saved
        return wrapper
    return decorator
