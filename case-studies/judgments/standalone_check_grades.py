"""Check an assessor's grades file against its packet, with nothing but Python's standard library.

    python check_grades.py packet_21.json grades_21.json

Copied as ``check_grades.py`` into each isolated assessor folder (``pool_known_answers.py
--assess``), where no code of the repository is present, so it imports nothing of gabarito. The
grades file must be a JSON list ``[{"pair": "P…", "grade": 0|1|2}, …]`` with every pair of the
packet exactly once, in the packet's order. Prints ``ok: N pairs graded`` (exit 0) or one line
``error: FILE: record N: what is wrong`` (exit 2). The rules are those of
``gabarito.inputs.pools.read_grades`` plus the order; a test holds the two to the same verdicts.
"""

import json
import sys

GRADES = (0, 1, 2)


def check(packet_path, grades_path):
    """The number of pairs graded; raises ValueError with a one-line message otherwise."""
    try:
        with open(packet_path, encoding="utf-8") as f:
            expected = [p["pair"] for p in json.load(f)["pairs"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{packet_path}: not a packet ({exc})") from None
    try:
        with open(grades_path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"{grades_path}: grades file not found") from None
    except ValueError as exc:
        raise ValueError(f"{grades_path}: not a JSON list of grades ({exc})") from None
    if not isinstance(data, list):
        raise ValueError(f'{grades_path}: expected a JSON list of {{"pair", "grade"}}')
    wanted, seen = set(expected), set()
    for i, rec in enumerate(data, start=1):
        where = f"{grades_path}: record {i}"
        if not isinstance(rec, dict) or "pair" not in rec or "grade" not in rec:
            raise ValueError(f"{where}: expected an object with 'pair' and 'grade'")
        pid, grade = str(rec["pair"]), rec["grade"]
        if pid not in wanted:
            raise ValueError(f"{where}: unknown pair {pid!r}")
        if pid in seen:
            raise ValueError(f"{where}: pair {pid!r} graded twice")
        if isinstance(grade, bool) or grade not in GRADES:
            raise ValueError(f"{where}: grade {grade!r} is not one of {list(GRADES)}")
        if i <= len(expected) and pid != expected[i - 1]:
            raise ValueError(f"{where}: pair {pid!r} out of order, the packet has {expected[i - 1]!r} here")
        seen.add(pid)
    missing = [p for p in expected if p not in seen]
    if missing:
        raise ValueError(f"{grades_path}: {len(missing)} pair(s) without a grade, first {missing[0]!r}")
    return len(seen)


def main(argv):
    if len(argv) != 2:
        print("usage: check_grades.py PACKET GRADES", file=sys.stderr)
        return 2
    try:
        n = check(argv[0], argv[1])
    except ValueError as exc:
        print("error: " + " ".join(str(exc).split()), file=sys.stderr)
        return 2
    print(f"ok: {n} pairs graded")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
