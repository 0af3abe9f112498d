"""What a comparison run keeps: its result (:class:`ComparisonResult`),
the rows and trajectories saved case by case as they finish (so an
interrupted run loses nothing and the next one resumes), and the files a
finished run is read back from (:func:`load`).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from .cases import RunOptions

#: One case's row of the results table (JSON-serializable values).
Row: TypeAlias = dict[str, Any]
#: One case's arrays (q'' at random states, trajectories), by name.
Arrays: TypeAlias = dict[str, Any]


#: Statuses of rows whose outcome is decided by the options and the code
#: alone, and which a later run therefore resumes.  A time-out is resumed
#: only under a time limit no longer than its own; a case whose worker
#: died ("crashed") is always run again.
_SETTLED = ("ok", "error", "unsupported", "integration_failed", "oracle_disagrees")


class RunOutputError(OSError):
    """The run's output directory could not be written; the run stopped."""


@dataclass
class ComparisonResult:
    """Rows (one per case), trajectories and run metadata.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per (system variant, formulation).
    trajectories : dict
        Case id -> {"t", "q", "qd", "deviation", ...} arrays.
    metadata : dict
    out : Path or None
        Where the run was saved.
    """

    frame: pd.DataFrame
    trajectories: dict[str, Arrays]
    metadata: dict[str, Any]
    out: Path | None = None

    def __repr__(self) -> str:
        f = self.frame
        counts = f["status"].value_counts().to_dict() if len(f) else {}
        return (
            f"ComparisonResult(cases={len(f)}, status={counts}, "
            f"out={str(self.out) if self.out else None!r})"
        )

    def _repr_html_(self) -> str:
        from .tables import result_html

        return str(result_html(self))

    @property
    def failures(self) -> pd.DataFrame:
        """Rows that fail the run: any case neither ``ok`` nor declined
        (``unsupported``), except the peers' limitations."""
        f = self.frame
        if not len(f):
            return f
        return f[~f["status"].isin(["ok", "unsupported"]) & ~self._limited()]

    @property
    def limitations(self) -> pd.DataFrame:
        """Combinations a formulation declines (``unsupported``) and peer
        rows that time out or give non-finite equations: listed, never a
        failure of the run."""
        f = self.frame
        if not len(f):
            return f
        return f[
            (f["status"] == "unsupported") | ((f["status"] != "ok") & self._limited())
        ]

    def _limited(self) -> pd.Series:
        f = self.frame
        if "peer_limitation" not in f.columns:
            return pd.Series(False, index=f.index)
        return f["peer_limitation"].map(lambda v: v is True or v == "True" or v == 1)


def _git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            cwd=Path(__file__).resolve().parent,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _versions() -> dict[str, str]:
    import scipy
    import sympy

    out = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "sympy": sympy.__version__,
        "pandas": pd.__version__,
    }
    return out


def _note(message: str, bar: Any = None) -> None:
    if bar is not None:
        bar.write(message, file=sys.stderr)
    else:
        print(message, file=sys.stderr, flush=True)


def _read_rows(out: Path, *, repair: bool = True) -> list[Row]:
    """The rows of ``rows.jsonl``; unreadable lines (one cut by an
    interrupted write, a full disk) are dropped from the file (unless not
    ``repair``), so that the next row appended starts on a line of its
    own."""
    path = out / "rows.jsonl"
    if not path.exists():
        return []
    text = path.read_text(errors="replace")
    rows, bad = [], 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or "case" not in row:
                raise ValueError("not a row")
        except ValueError:
            bad += 1
            continue
        rows.append(row)
    if repair and (bad or (text and not text.endswith("\n"))):
        _atomic_write(
            path, "".join(json.dumps(r, default=str) + "\n" for r in rows).encode()
        )
        _note(f"{path}: dropped {bad} unreadable line(s); those cases run again")
    return rows


def _resumable(out: Path, row: Row, opts: RunOptions) -> str:
    """Why a row of the same options cannot be resumed ('' when it can)."""
    status = row.get("status")
    if status == "timeout":
        if float(row.get("timeout_s") or 0) < opts.timeout:
            return "timed out under a shorter time limit"
    elif status not in _SETTLED:
        return f"status {status!r} is not a result"
    if row.get("arrays"):
        path = out / row["arrays"]
        try:
            with np.load(path) as data:
                stamps = [
                    str(data[k]) if k in data.files else "" for k in _TRAJECTORY_STAMPS
                ]
        except (OSError, ValueError, KeyError) as exc:
            return f"its trajectory {path.name} cannot be read ({exc})"
        if stamps != [row.get(k, "") for k in _TRAJECTORY_STAMPS]:
            return f"its trajectory {path.name} belongs to another run"
    return ""


def _load_done(
    out: Path, opts: RunOptions, declarations: Mapping[str, str]
) -> dict[str, Row]:
    """Finished rows of this run's options and code, by case id; a case in
    ``declarations`` (case id -> :func:`declaration_key`, the users' own
    systems) only from rows of the same declaration."""
    digest = opts.digest()
    done: dict[str, Row] = {}
    for row in _read_rows(out):
        if row.get("options_digest") != digest:
            continue
        if row["case"] in declarations and (
            row.get("declaration") != declarations[row["case"]]
        ):
            continue
        why = _resumable(out, row, opts)
        if why:
            done.pop(row["case"], None)
            continue
        done[row["case"]] = row
    return done


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


#: Row fields a trajectory file carries and is named by: the run's key
#: and the system's declaration.
_TRAJECTORY_STAMPS = ("options_digest", "declaration")


def _save_case(out: Path, row: Row, arrays: Arrays) -> None:
    """Trajectory first (written whole, named by case, options digest and
    declaration), then the row as one line: a row on disk always has its
    arrays."""
    try:
        if arrays:
            tdir = out / "trajectories"
            tdir.mkdir(parents=True, exist_ok=True)
            slug = "".join(c if c.isalnum() or c in "-_" else "_" for c in row["case"])
            stamps = {k: row[k] for k in _TRAJECTORY_STAMPS if row.get(k)}
            name = ".".join([slug, *stamps.values(), "npz"])
            tmp = tdir / f".{name}.{os.getpid()}.tmp.npz"
            payload: Arrays = {k: np.array(v) for k, v in stamps.items()}
            try:
                np.savez_compressed(tmp, **payload, **arrays)
                os.replace(tmp, tdir / name)
            finally:
                tmp.unlink(missing_ok=True)
            row["arrays"] = f"trajectories/{name}"
        line = (json.dumps(row, default=str) + "\n").encode()
        append_whole(out / "rows.jsonl", line)
    except OSError as exc:
        raise RunOutputError(
            exc.errno, f"cannot save case {row['case']} in {out}: {exc.strerror or exc}"
        ) from exc


def append_whole(path: Path, data: bytes) -> None:
    """Append ``data`` (whole lines) to ``path`` and sync it.  A short
    write (a full disk) is cut off again, so the file keeps whole lines:
    those saved before, and nothing of these; it raises ``OSError``."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if os.write(fd, data) != len(data):
            os.ftruncate(fd, size)
            raise OSError(28, "short write (disk full?)")
        os.fsync(fd)
    finally:
        os.close(fd)


def _load_arrays(out: Path | None, row: Row) -> Arrays:
    if out is None or not isinstance(row.get("arrays"), str):
        return {}
    path = out / row["arrays"]
    if not path.exists():
        return {}
    with np.load(path) as data:
        return {k: data[k] for k in data.files if k not in _TRAJECTORY_STAMPS}


def check_output_dir(out: str | os.PathLike[str]) -> Path:
    """``out`` as a directory this process can write, created if needed.

    Raises
    ------
    ValueError
        When it names a file or cannot be created or written.
    """
    out = Path(out)
    try:
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {out} is a file, not a directory")
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(
            f"--out {out} cannot be written: {exc.strerror or exc}"
        ) from None
    return out


def save(result: ComparisonResult, out: str | os.PathLike[str]) -> None:
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    _atomic_write(path / "results.csv", result.frame.to_csv(index=False).encode())
    _atomic_write(
        path / "metadata.json",
        json.dumps(result.metadata, indent=2, default=str).encode(),
    )


def load(out: str | os.PathLike[str]) -> ComparisonResult:
    """A saved run (results.csv, metadata.json, trajectories)."""
    path = Path(out)
    if not (path / "results.csv").exists():
        raise FileNotFoundError(f"no results.csv in {path}: run a comparison first")
    frame = pd.read_csv(path / "results.csv", keep_default_na=True)
    metadata = json.loads((path / "metadata.json").read_text())
    trajectories = {}
    for _, row in frame.iterrows():
        if isinstance(row.get("arrays"), str) and isinstance(row.get("case"), str):
            trajectories[row["case"]] = _load_arrays(path, {"arrays": row["arrays"]})
    return ComparisonResult(frame, trajectories, metadata, path)
