#!/usr/bin/env python3
"""Draws fusionscope's icon as SVG and PNG from one description (standard library only).

The picture is the app's point in miniature: a timeline of five unfused kernels above the same
work fused into two, over a time axis. Run it after changing the shapes:
    assets/icon/make_icon.py   (writes fusionscope.svg and fusionscope.png beside it)
"""
import pathlib
import struct
import zlib

SIZE = 256
BACKGROUND = ("#1d2330", (8, 8, 240, 240, 44))
# (colour, (x, y, width, height, corner radius)) in a 256 x 256 box, drawn in order.
SHAPES = [
    BACKGROUND,
    # unfused: GEMM, gelu, GEMM, mul, GEMM
    ("#f0785a", (36, 60, 42, 40, 7)),
    ("#e6be46", (84, 60, 20, 40, 7)),
    ("#f0785a", (110, 60, 42, 40, 7)),
    ("#e6be46", (158, 60, 20, 40, 7)),
    ("#f0785a", (184, 60, 36, 40, 7)),
    # fused: the gated GEMM and the down GEMM
    ("#5aaaf0", (36, 120, 100, 40, 7)),
    ("#5aaaf0", (142, 120, 44, 40, 7)),
    # time axis and its ticks
    ("#8a93a6", (36, 184, 184, 6, 3)),
    ("#8a93a6", (36, 176, 6, 20, 3)),
    ("#8a93a6", (125, 176, 6, 20, 3)),
    ("#8a93a6", (214, 176, 6, 20, 3)),
]


def svg() -> str:
    rects = "\n".join(
        f'  <rect x="{x}" y="{y}" width="{w}" height="{h}" rx="{r}" fill="{c}"/>'
        for c, (x, y, w, h, r) in SHAPES
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{SIZE}" height="{SIZE}" '
        f'viewBox="0 0 {SIZE} {SIZE}">\n  <title>fusionscope</title>\n{rects}\n</svg>\n'
    )


def inside(px: float, py: float, x: int, y: int, w: int, h: int, r: int) -> bool:
    # Distance to the rectangle shrunk by r, compared with r: a rounded rectangle.
    dx = max(x + r - px, 0.0, px - (x + w - r))
    dy = max(y + r - py, 0.0, py - (y + h - r))
    return dx * dx + dy * dy <= r * r


def png() -> bytes:
    n = 4  # samples per pixel side, for smooth edges
    rgba = [[0.0, 0.0, 0.0, 0.0] for _ in range(SIZE * SIZE)]
    for colour, (x, y, w, h, r) in SHAPES:
        rgb = [int(colour[i : i + 2], 16) / 255.0 for i in (1, 3, 5)]
        for py in range(y, y + h):
            for px in range(x, x + w):
                hits = sum(
                    inside(px + (i + 0.5) / n, py + (j + 0.5) / n, x, y, w, h, r)
                    for i in range(n)
                    for j in range(n)
                )
                if not hits:
                    continue
                a = hits / (n * n)
                p = rgba[py * SIZE + px]
                out_a = a + p[3] * (1 - a)
                for k in range(3):  # "over", premultiplied then divided back
                    p[k] = (rgb[k] * a + p[k] * p[3] * (1 - a)) / out_a
                p[3] = out_a
    raw = bytearray()
    for row in range(SIZE):
        raw.append(0)  # no filter
        for p in rgba[row * SIZE : (row + 1) * SIZE]:
            raw.extend(round(v * 255) for v in p)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(raw), 9))
        + chunk(b"IEND", b"")
    )


if __name__ == "__main__":
    here = pathlib.Path(__file__).resolve().parent
    (here / "fusionscope.svg").write_text(svg())
    (here / "fusionscope.png").write_bytes(png())
