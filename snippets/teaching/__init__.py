"""Arithmetic the pages teach that sizes nothing (the engine sizes every deployment):

- `formats`  what a weight costs in bits, and how far a small float reaches (E4M3 to 448, E2M1 to 6)
- `traffic`  what tensor and pipeline parallelism send between GPUs, at a link's full rate
- `rounded`  the source page's rounded sizing (810 GB / 80 GB -> 11 GPUs) and weights-only FLOP per byte
"""
