"""Independent references that tests in several folders check against, written from
the rules and proven closed forms, never from the code under test."""

from __future__ import annotations


def take_k_winning(heaps: tuple[int, ...], k: int) -> set[tuple[int, int]]:
    """Winning moves of Nim with takes of 1..k, from the proven closed form (the Grundy
    value of a heap is its size mod k+1), by brute force over the moves: no solver."""
    out = set()
    for i, h in enumerate(heaps):
        for take in range(1, min(h, k) + 1):
            after = [*heaps[:i], h - take, *heaps[i + 1 :]]
            xor = 0
            for a in after:
                xor ^= a % (k + 1)
            if xor == 0:
                out.add((i, take))
    return out


def fibonacci_numbers(limit: int) -> list[int]:
    """1, 2, 3, 5, 8, ... up to the first one past `limit`."""
    fibs = [1, 2]
    while fibs[-1] <= limit:
        fibs.append(fibs[-1] + fibs[-2])
    return fibs


def smallest_zeckendorf_part(n: int) -> int:
    """The smallest Fibonacci number of n's Zeckendorf sum (greedy, from the largest)."""
    fibs = fibonacci_numbers(n)
    part = smallest = n
    while part:
        largest = max(f for f in fibs if f <= part)
        smallest, part = largest, part - largest
    return smallest


def octal_reference(code: str, n_max: int) -> list[int]:
    """Plain-Python octal recurrence, straight from the definition of the digits."""
    digits = [0, *(int(ch) for ch in code.split(".")[1])]
    g = [0] * (n_max + 1)
    for n in range(1, n_max + 1):
        options = set()
        for k in range(1, min(len(digits) - 1, n) + 1):
            d, rest = digits[k], n - k
            if rest == 0 and d & 1:
                options.add(0)
            if rest > 0 and d & 2:
                options.add(g[rest])
            if d & 4:
                options.update(g[a] ^ g[rest - a] for a in range(1, rest // 2 + 1))
        m = 0
        while m in options:
            m += 1
        g[n] = m
    return g
