# SPDX-License-Identifier: BSD-3-Clause
"""Heterogeneous permeability: a correlated log-normal random field, or a file.

The generated field is log10 k = log10 k_g + s z, where z is white noise
smoothed by a Gaussian kernel and rescaled to zero mean and unit variance
over the grid.  Smoothing white noise with a Gaussian of standard deviation
w gives the Gaussian covariance exp(-r^2 / (4 w^2)), so w = lambda / 2 for
a correlation length lambda, the lag at which the correlation falls to 1/e.
The noise is drawn on a grid padded by three correlation lengths and the
smoothing wraps around it, so the cropped field has no periodic seam.
Rescaling over the grid makes the geometric mean and the log10 standard
deviation exactly the requested ones, whatever the seed: the scenario's
figures then describe the field actually used.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from scipy import ndimage

from rtsim.errors import ScenarioError


def lognormal_field(shape: tuple[int, int], spacing: tuple[float, float], *,
                    geometric_mean: float, log10_std: float,
                    correlation_length: tuple[float, float], seed: int) -> np.ndarray:
    """A (ny, nx) log-normal field; spacing and correlation_length as (y, x) in m."""
    if log10_std == 0.0:
        return np.full(shape, geometric_mean)
    width = [lam / (2.0 * h) for lam, h in zip(correlation_length, spacing)]  # cells
    pad = [math.ceil(3.0 * lam / h) for lam, h in zip(correlation_length, spacing)]
    noise = np.random.default_rng(seed).standard_normal(
        (shape[0] + 2 * pad[0], shape[1] + 2 * pad[1]))
    smooth = ndimage.gaussian_filter(noise, sigma=width, mode="wrap", truncate=6.0)
    z = smooth[pad[0]:pad[0] + shape[0], pad[1]:pad[1] + shape[1]]
    std = z.std()
    # A correlation length far beyond the grid leaves a nearly flat field:
    # rescaling it would amplify round-off into structure.
    z = (z - z.mean()) / std if std > 1e-12 else np.zeros(shape)
    return geometric_mean * 10.0 ** (log10_std * z)


def read_field(path: Path, shape: tuple[int, int]) -> np.ndarray:
    """A (ny, nx) field from a .npy file or a whitespace-separated text file."""
    try:
        values = np.load(path) if path.suffix == ".npy" else np.loadtxt(path, ndmin=2)
    except FileNotFoundError:
        raise ScenarioError(f"{path}: permeability file not found") from None
    except (OSError, ValueError) as exc:
        raise ScenarioError(f"{path}: cannot read permeability file: {exc}") from None
    values = np.asarray(values, dtype=float)
    if values.shape != shape:
        raise ScenarioError(f"{path}: permeability field has shape {values.shape}, "
                            f"the grid needs (ny, nx) = {shape}")
    if not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ScenarioError(f"{path}: permeability values must be finite and > 0")
    return values
