"""Contrast of the primary colour (WCAG 2.2, success criterion 1.4.3 "Contrast (Minimum)": 4.5:1 for text): the
pages use it for links on white and for the white text of buttons, so one ratio against white decides both."""

from __future__ import annotations

AA_TEXT = 4.5


def _channel(value: int) -> float:
    c = value / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def luminance(colour: str) -> float:
    """The relative luminance of `#rrggbb` (WCAG's definition)."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * _channel(r) + 0.7152 * _channel(g) + 0.0722 * _channel(b)


def contrast(first: str, second: str) -> float:
    """The contrast ratio of two `#rrggbb` colours, 1 to 21."""
    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def darker(colour: str, share: float = 0.25) -> str:
    """`colour` mixed with `share` of black: the hover shade, darker still, so at least as legible."""
    r, g, b = (round(int(colour[i:i + 2], 16) * (1 - share)) for i in (1, 3, 5))
    return f"#{r:02x}{g:02x}{b:02x}"
